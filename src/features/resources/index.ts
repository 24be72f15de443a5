export { bazaarOf } from './bazaar.ts';
export { registerResourcePages } from './page-routes.ts';
export {
  registerEndpointAppRoutes,
  registerEndpointIntegrationRoutes,
  registerIncomeAppRoutes,
} from './routes.ts';
export { fileResource, getResource, listDiscoverable, listIncome, listIncomePayments } from './service.ts';
