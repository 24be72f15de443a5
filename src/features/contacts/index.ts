export { checkIban, type Requisites } from './domain.ts';
export { registerContactPages } from './page-routes.ts';
export { registerContactAppRoutes, registerContactRoutes } from './routes.ts';
export {
  contactExists,
  findContactPayee,
  listContactsInApp,
  presentContact,
  saveInvoiceContact,
} from './service.ts';
export type { ContactAddressRow, ContactRow } from './store.ts';
