export { registerContactRoutes } from './routes.ts';
export { contactExists, presentContact } from './service.ts';
export type { ContactAddressRow, ContactRow } from './store.ts';
