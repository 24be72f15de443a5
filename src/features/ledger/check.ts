import { assert } from '../../core/assert.ts';
import { type AmountE8, asAmount, formatAmount, parseDecimalText } from '../../core/money.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { imbalance } from './domain.ts';
import { keptIncomeDays } from './income-days.ts';
import * as store from './store.ts';

// `tollbook ledger check`: the books' rules, held against the postings. The postings are read
// once, entry by entry in key order, a bounded batch of entries at a time, and each rule is
// checked as they pass: an entry's balance per currency when its last posting has passed, a
// tracked account's running sum, an income day's running sum and entry count. What the check
// keeps between batches is one sum per tracked account and per income day, never anything per
// entry or per posting, so its memory does not grow with the number of postings. Every read
// runs in one read-only snapshot, so filings and settling runs in flight cannot tear it.

/** Entries read per batch (their postings come with them). */
export const CHECK_BATCH = 10_000;

export type LedgerReport = {
  unbalanced: { entry_id: string; currency: string; sum: string }[];
  empty: { id: string }[];
  drifted: { id: string; balance: string; sum: string }[];
  overdrawn: { id: string; balance: string }[];
  incomeDays: { space_id: string; day: string; ledger_account_id: string; currency: string }[];
  sound: boolean;
};

function amountOf(text: string): AmountE8 {
  const parsed = parseDecimalText(text);
  assert(parsed.ok, `The database returned a non-decimal amount: ${text}`);
  return parsed.value;
}

type Tracked = { balance: string; sum: bigint };
type IncomeSum = {
  spaceId: string;
  accountId: string;
  day: string;
  currency: string;
  sum: bigint;
  entries: number;
};

/**
 * Every entry has two postings or more and balances per currency, every tracked balance equals
 * its postings, no guarded account is negative, and the pre-summed income days equal their
 * postings. `batch` is the number of entries read at a time.
 */
export function checkLedger(db: Queryable, spaceId?: string, batch = CHECK_BATCH): Promise<LedgerReport> {
  if (db.isTransaction) return checkInSnapshot(db, spaceId, batch);
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute((tx) => checkInSnapshot(tx, spaceId, batch));
}

async function checkInSnapshot(db: Queryable, spaceId: string | undefined, batch: number) {
  // The accounts whose postings are summed: one running sum each (tracked) or a role (income).
  const tracked = new Map<string, Tracked>();
  const incomeAccounts = new Map<string, string>();
  for (let after: string | undefined; ; ) {
    const rows = await store.summedAccountsAfter(db, spaceId, after, batch);
    for (const row of rows) {
      if (row.tracks_balance) tracked.set(row.id, { balance: row.balance, sum: 0n });
      if (row.kind === 'income') incomeAccounts.set(row.id, row.space_id);
    }
    if (rows.length < batch) break;
    after = rows[rows.length - 1]?.id;
  }

  const report: LedgerReport = {
    unbalanced: [],
    empty: [],
    drifted: [],
    overdrawn: [],
    incomeDays: [],
    sound: true,
  };
  const incomeSums = new Map<string, IncomeSum>();
  // The entry whose postings are passing: its postings, and the income days it has touched.
  let entryId: string | undefined;
  let postings: { account: { currency: string }; amount: AmountE8 }[] = [];
  const daysOfEntry = new Set<string>();
  const endEntry = () => {
    if (entryId === undefined) return;
    if (postings.length < 2) report.empty.push({ id: entryId });
    for (const [currency, sum] of imbalance(postings))
      report.unbalanced.push({ entry_id: entryId, currency, sum: formatAmount(sum) });
    postings = [];
    daysOfEntry.clear();
  };

  for (let after: string | undefined, done = false; !done; ) {
    const last = await store.entryBatchEnd(db, spaceId, after, batch);
    done = last === undefined;
    const rows = await store.entriesWithPostings(db, spaceId, after, last);
    for (const row of rows) {
      if (row.entry_id !== entryId) {
        endEntry();
        entryId = row.entry_id;
      }
      const { ledger_account_id: accountId, currency, amount: text, day } = row;
      if (accountId === null || currency === null || text === null || day === null) continue;
      const amount = amountOf(text);
      postings.push({ account: { currency }, amount });
      const account = tracked.get(accountId);
      if (account) account.sum += amount;
      const incomeSpace = incomeAccounts.get(accountId);
      if (incomeSpace !== undefined) {
        const key = `${incomeSpace}|${day}|${accountId}|${currency}`;
        const sum = incomeSums.get(key);
        const firstOfEntry = !daysOfEntry.has(key);
        daysOfEntry.add(key);
        if (sum) {
          sum.sum += amount;
          if (firstOfEntry) sum.entries += 1;
        } else
          incomeSums.set(key, { spaceId: incomeSpace, accountId, day, currency, sum: amount, entries: 1 });
      }
    }
    // A batch holds whole entries, so the last entry's postings have all passed by its end.
    endEntry();
    entryId = undefined;
    after = last;
  }

  for (const [id, account] of tracked)
    if (amountOf(account.balance) !== account.sum)
      report.drifted.push({ id, balance: account.balance, sum: formatAmount(asAmount(account.sum)) });
  report.overdrawn = await store.overdrawnAccounts(db, spaceId);

  for (const kept of await keptIncomeDays(db, spaceId)) {
    const key = `${kept.space_id}|${kept.day}|${kept.ledger_account_id}|${kept.currency}`;
    const posted = incomeSums.get(key);
    incomeSums.delete(key);
    if (!posted || posted.sum !== amountOf(kept.amount) || BigInt(posted.entries) !== BigInt(kept.entries))
      report.incomeDays.push({
        space_id: kept.space_id,
        day: kept.day,
        ledger_account_id: kept.ledger_account_id,
        currency: kept.currency,
      });
  }
  // Postings on a day the kept figures do not have at all.
  for (const posted of incomeSums.values())
    report.incomeDays.push({
      space_id: posted.spaceId,
      day: posted.day,
      ledger_account_id: posted.accountId,
      currency: posted.currency,
    });

  report.sound = Object.values(report).every((list) => !Array.isArray(list) || list.length === 0);
  return report;
}
