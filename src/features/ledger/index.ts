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
export { checkLedger, ledgerAccounts, type LedgerReport, naturalBalanceOf, postEntry, readAmount, reverseEntry } from './service.ts';
