export {
  canAdminister,
  planIncludesChat,
  subscriptionAllowance,
  syncedRowsAllowance,
} from './domain.ts';
export { registerSpaceRoutes } from './routes.ts';
export { CurrencyCode } from './schemas.ts';
export {
  createSpace,
  invalidateKeys,
  listOwnerIds,
  lockSpacePlan,
  publicFace,
  requireAdministrator,
  requireRole,
  type SpacesDeps,
} from './service.ts';
