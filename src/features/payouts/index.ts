export { type ChainRailDeps, followChainPayouts } from './chain-rail.ts';
export { registerPayoutPages } from './page-routes.ts';
export { registerPayoutRoutes } from './routes.ts';
export type { PayoutsDeps } from './service.ts';
export { createPayoutIn, type PayoutInput } from './service.ts';
export { type AwaitingMe, awaitingApprovalBy } from './summary.ts';
