export { checkIban, normalizeRequisites, type Requisites, type RequisitesInput } from './domain.ts';
export { registerContactPages } from './page-routes.ts';
export { registerContactAppRoutes, registerContactRoutes } from './routes.ts';
export { RequisitesIn, RequisitesOut } from './schemas.ts';
export {
  contactExists,
  findContactPayee,
  listContactsInApp,
  presentContact,
  saveInvoiceContact,
} from './service.ts';
export type { ContactAddressRow, ContactRow } from './store.ts';
