export { registerChargeRoutes } from './routes.ts';
export { ChargeOut } from './schemas.ts';
export {
  type Amounts,
  type ChargeInput,
  type ChargesDeps,
  canTopUp,
  charge,
  TOP_UP_CHOICES,
  topUpFromBalancePage,
} from './service.ts';
