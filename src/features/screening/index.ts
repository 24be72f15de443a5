export {
  hasInvisible,
  LEGAL_FORMS,
  normalizeAddress,
  normalizeDestination,
  normalizeName,
} from './domain.ts';
export {
  type FlaggedEntry,
  flaggedEntries,
  flaggedIncomeRows,
  flagInboundTransfer,
  type InboundFlag,
  type InboundTransfer,
  inboundFlags,
} from './inbound.ts';
export {
  LIST_BYTES_MAX,
  loadFromSource,
  type RefreshDeps,
  type RefreshOutcome,
  refreshDue,
  refreshScreeningList,
} from './refresh.ts';
export { parseSdnXml } from './sdn-xml.ts';
export {
  buildIndex,
  configureScreening,
  DEFAULT_MIN_SCORE,
  type HoldMatch,
  holdMatches,
  type LoadOutcome,
  loadScreeningList,
  matchSubject,
  payerListed,
  recordHold,
  SANCTIONED_PAYER,
  type ScreeningHit,
  type ScreeningListStatus,
  screen,
  screeningGauges,
  screeningStatus,
} from './service.ts';
