export { registerContactRoutes } from './routes.ts';
export { presentContact } from './service.ts';
export type { ContactAddressRow, ContactRow } from './store.ts';
