export { registerContactRoutes } from './routes.ts';
export { contactExists, presentContact, saveInvoiceContact } from './service.ts';
export type { ContactAddressRow, ContactRow } from './store.ts';
