export { hasOnChainFloor, ON_CHAIN_FLOOR, pegOf, TOKEN_DECIMALS } from './domain.ts';
export { type OpenTotal, openRequestTotals, settleAllOpenSums } from './open-sums.ts';
export { registerPaymentRequestPages } from './page-routes.ts';
export { registerPaymentRequestAppRoutes, registerPaymentRequestRoutes } from './routes.ts';
export { PaymentRequestOut } from './schemas.ts';
export {
  activeRequestForInvoice,
  activeRequestsForAccount,
  findRequestByToken,
  lapseRequests,
  mintRequest,
  openAmount,
  openPrice,
  openTopUpRequest,
  type PaymentRequestRecord,
  present as presentRequest,
  type Rail,
  type RequestsDeps,
  refundSettlement,
  reverseChainSettlements,
  type SettleInput,
  type SettleOutcome,
  settlePaymentRequest,
} from './service.ts';
export type { RequestRow } from './store.ts';
export { hasAnyRequest } from './summary.ts';
