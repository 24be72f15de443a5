export { registerChargeRoutes } from './routes.ts';
export { canTopUp, TOP_UP_CHOICES, topUpFromBalancePage } from './service.ts';
