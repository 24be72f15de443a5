export { registerContactPages } from './page-routes.ts';
export { registerContactAppRoutes, registerContactRoutes } from './routes.ts';
export { contactExists, listContactsInApp, presentContact, saveInvoiceContact } from './service.ts';
export type { ContactAddressRow, ContactRow } from './store.ts';
