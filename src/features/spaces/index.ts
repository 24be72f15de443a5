export {
  canAdminister,
  planIncludesChat,
  subscriptionAllowance,
  syncedRowsAllowance,
} from './domain.ts';
export { registerSpaceRoutes } from './routes.ts';
export { CurrencyCode } from './schemas.ts';
export {
  baseCurrencyOf,
  closedThrough,
  closePeriod,
  createSpace,
  filingTermsQuery,
  invalidateKeys,
  listOwnerIds,
  lockSpacePlan,
  publicFace,
  requireAdministrator,
  requireRole,
  type SpacesDeps,
} from './service.ts';
