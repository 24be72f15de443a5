export { CHECK_BATCH, checkLedger, type LedgerReport } from './check.ts';
export { CheckStopped, checkLedgerInThread } from './check-thread.ts';
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
export { settleAllIncomeDays } from './income-days.ts';
export {
  type ConditionalPostResult,
  type EntryFilter,
  ensureLedgerAccounts,
  entryWithPostings,
  fileEntries,
  incomeRowEntries,
  incomeRows,
  ledgerAccountIdsOf,
  ledgerAccountSpecs,
  ledgerAccounts,
  listEntriesWithPostings,
  naturalBalanceOf,
  type PageInput,
  type PreparedEntries,
  postEntries,
  postEntry,
  postEntryIf,
  prepareEntries,
  readAmount,
  reverseEntries,
  reverseEntry,
} from './service.ts';
export type { EntryCondition, EntryRider, LedgerAccountSpec } from './store.ts';
export { type IncomeDay, incomeByDay } from './summary.ts';
