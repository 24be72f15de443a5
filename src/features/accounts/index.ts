export { NETWORKS } from './domain.ts';
export { registerAccountRoutes } from './routes.ts';
export { listSpaceAccounts, presentAccount, requireAccount } from './service.ts';
export type { AccountRow } from './store.ts';
