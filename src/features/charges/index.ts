export { registerChargeRoutes } from './routes.ts';
