export { registerX402CreditRoutes } from './credit-routes.ts';
export { createFacilitator, type Facilitator } from './facilitator.ts';
export { followPendingSettlements } from './follower.ts';
export { registerX402Routes, type X402RouteDeps } from './routes.ts';
export { type MachineAnswer, machineQuote, payOnPage, type X402Deps } from './service.ts';
export { isSettledTransaction, type SettledTransfer, settledNotFollowed } from './store.ts';
