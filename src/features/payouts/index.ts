export { registerPayoutRoutes } from './routes.ts';
export type { PayoutsDeps } from './service.ts';
