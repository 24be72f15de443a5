export { normalizeAddress, normalizeName } from './domain.ts';
export { parseSdnXml } from './sdn-xml.ts';
export {
  type LoadOutcome,
  loadScreeningList,
  type ScreeningHit,
  type ScreeningListStatus,
  screen,
  screeningGauges,
  screeningStatus,
} from './service.ts';
