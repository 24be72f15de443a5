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
  type LedgerReport,
  ledgerAccounts,
  naturalBalanceOf,
  postEntry,
  readAmount,
  reverseEntry,
} from './service.ts';
