export { type ChainRailDeps, followChainPayouts } from './chain-rail.ts';
export { registerPayoutRoutes } from './routes.ts';
export type { PayoutsDeps } from './service.ts';
