export { registerClientCreditPages } from './page-routes.ts';
export { registerClientCreditRoutes } from './routes.ts';
export {
  balanceUrl,
  CREDIT_CURRENCY,
  creditPage,
  findClientCredit,
  findCreditByPageToken,
  lockClientCredit,
  type OpenCredit,
  openClientCredit,
} from './service.ts';
