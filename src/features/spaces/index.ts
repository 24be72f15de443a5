export {
  COUNTRY_CODES,
  countryName,
  displayNameOf,
  inClosedPeriod,
  planIncludesChat,
  postalAddressText,
  subscriptionAllowance,
  syncedRowsAllowance,
} from './domain.ts';
export { registerInvitationPages } from './invitation-page-routes.ts';
export { registerInvitationRoutes } from './invitation-routes.ts';
export {
  acceptInvitation,
  type InvitationDeps,
  invitationState,
} from './invitations.ts';
export { logoByDigest, logoDigestOf, logoUrlOf, sellerLogoOf } from './logo.ts';
export { takeDocumentNumber } from './numbering.ts';
export { registerSpacePages } from './page-routes.ts';
export { type SellerProfile, sellerFaceOf, sellerProfileOf } from './profile.ts';
export { registerSpaceRoutes } from './routes.ts';
export { CurrencyCode } from './schemas.ts';
export {
  baseCurrencyOf,
  closedThrough,
  closePeriod,
  createSpace,
  filingTermsQuery,
  getSpace,
  invalidateKeys,
  listMembers,
  listOwnerIds,
  listSpaces,
  lockSpacePlan,
  peopleFormatOf,
  requireAdministering,
  requireAdministrator,
  requireMember,
  requireRole,
  requireWriting,
  type SpacesDeps,
  spaceNameAndPlan,
} from './service.ts';
export { hasSecondMember } from './summary.ts';
