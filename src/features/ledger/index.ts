export {
  decrease,
  type EntryDraft,
  increase,
  type LedgerAccountRef,
  naturalBalance,
  type Origin,
  type Posting,
  type PostResult,
} from './domain.ts';
export {
  checkLedger,
  ensureLedgerAccounts,
  type LedgerReport,
  ledgerAccountSpecs,
  ledgerAccounts,
  naturalBalanceOf,
  postEntries,
  postEntry,
  readAmount,
  reverseEntries,
  reverseEntry,
} from './service.ts';
export type { LedgerAccountSpec } from './store.ts';
