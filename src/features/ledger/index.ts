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
  fileEntries,
  type LedgerReport,
  ledgerAccountSpecs,
  ledgerAccounts,
  naturalBalanceOf,
  type PreparedEntries,
  postEntries,
  postEntry,
  prepareEntries,
  readAmount,
  reverseEntries,
  reverseEntry,
} from './service.ts';
export type { LedgerAccountSpec } from './store.ts';
