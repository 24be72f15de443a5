export { checkIban, type Requisites } from './domain.ts';
export { registerContactRoutes } from './routes.ts';
export { contactExists, findContactPayee, presentContact, saveInvoiceContact } from './service.ts';
export type { ContactAddressRow, ContactRow } from './store.ts';
