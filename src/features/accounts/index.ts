export { registerAccountAppRoutes } from './app-routes.ts';
export { NETWORKS } from './domain.ts';
export { registerLedgerPages } from './ledger-page-routes.ts';
export { listLedgerEntries, readLedgerEntry } from './ledger-reads.ts';
export { registerLedgerAppRoutes } from './ledger-routes.ts';
export { registerAccountPages } from './page-routes.ts';
export { completeProof, startProof } from './proofs.ts';
export { registerAccountRoutes } from './routes.ts';
export {
  type AccountFacts,
  createAccount,
  findProvenAccounts,
  listAccountsInApp,
  listSpaceAccounts,
  markServerProven,
  type PushAccount,
  presentAccount,
  requireAccount,
  requireAccountFacts,
  resolvePushAccounts,
} from './service.ts';
export type { AccountRow } from './store.ts';
