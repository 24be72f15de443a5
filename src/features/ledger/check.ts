import { assert } from '../../core/assert.ts';
import { type AmountE8, asAmount, formatAmount, parseDecimalText } from '../../core/money.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { imbalance } from './domain.ts';
import { keptIncomeDays } from './income-days.ts';
import * as store from './store.ts';

// `tollbook ledger check`: the books' rules, held against the postings. The postings are read
// once, by one statement (a cursor), entry by entry in key order, a bounded batch of rows at a
// time, and each rule is checked as they pass: an entry's balance per currency when its last
// posting has passed, a tracked account's running sum, an income day's running sum and entry
// count. What the check keeps between batches is one sum per tracked account and per income
// day, and the postings of the one entry being read, never anything per entry or per posting
// of the book, so its memory does not grow with the number of postings. Every read runs in
// one read-only snapshot, so filings and settling runs in flight cannot tear it.

/** Rows (postings, and entries without any) read per batch. */
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
/** An income day's running sum, and the last entry counted in it (an entry's postings pass together). */
type IncomeSum = { sum: bigint; entries: number; lastEntry: string };
/** Per income account (by id): its book, and its days' sums by currency, then by day. */
type IncomeAccount = { spaceId: string; byCurrency: Map<string, Map<string, IncomeSum>> };

/** Adds an income posting to its day; an entry is counted once a day, as its postings pass together. */
function addIncome(income: IncomeAccount, currency: string, day: string, entryId: string, amount: AmountE8) {
  let days = income.byCurrency.get(currency);
  if (!days) {
    days = new Map();
    income.byCurrency.set(currency, days);
  }
  const sum = days.get(day);
  if (!sum) days.set(day, { sum: amount, entries: 1, lastEntry: entryId });
  else {
    sum.sum += amount;
    if (sum.lastEntry !== entryId) {
      sum.entries += 1;
      sum.lastEntry = entryId;
    }
  }
}

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

/** What the check sums as the postings pass: a running sum per tracked account, days per income account. */
type Sums = { tracked: Map<string, Tracked>; incomeAccounts: Map<string, IncomeAccount> };

async function checkInSnapshot(db: Queryable, spaceId: string | undefined, batch: number) {
  const sums = await summedAccounts(db, spaceId, batch);
  const report: LedgerReport = {
    unbalanced: [],
    empty: [],
    drifted: [],
    overdrawn: [],
    incomeDays: [],
    sound: true,
  };
  await passPostings(db, spaceId, batch, sums, report);
  for (const [id, account] of sums.tracked)
    if (amountOf(account.balance) !== account.sum)
      report.drifted.push({ id, balance: account.balance, sum: formatAmount(asAmount(account.sum)) });
  report.overdrawn = await store.overdrawnAccounts(db, spaceId);
  report.incomeDays = await incomeDaysAdrift(db, spaceId, sums.incomeAccounts);
  report.sound = Object.values(report).every((list) => !Array.isArray(list) || list.length === 0);
  return report;
}

/** The accounts whose postings are summed: tracked ones (to hold against their balance) and income. */
async function summedAccounts(db: Queryable, spaceId: string | undefined, batch: number): Promise<Sums> {
  const sums: Sums = { tracked: new Map(), incomeAccounts: new Map() };
  for (let after: string | undefined; ; ) {
    const rows = await store.summedAccountsAfter(db, spaceId, after, batch);
    for (const row of rows) {
      if (row.tracks_balance) sums.tracked.set(row.id, { balance: row.balance, sum: 0n });
      if (row.kind === 'income')
        sums.incomeAccounts.set(row.id, { spaceId: row.space_id, byCurrency: new Map() });
    }
    if (rows.length < batch) return sums;
    after = rows[rows.length - 1]?.id;
  }
}

/**
 * Reads every entry of the scope with its postings, in key order, `batch` rows at a time: reports
 * each entry with fewer than two postings or off balance once its last posting has passed, and
 * adds each posting to its sums. An entry's postings may span two batches; the entry being read
 * is carried over.
 */
async function passPostings(
  db: Queryable,
  spaceId: string | undefined,
  batch: number,
  sums: Sums,
  report: LedgerReport,
) {
  // One object per currency serves every posting as its account (the balance rule reads only
  // the currency).
  const currencies = new Map<string, { currency: string }>();
  const ofCurrency = (currency: string) => {
    let known = currencies.get(currency);
    if (!known) {
      known = { currency };
      currencies.set(currency, known);
    }
    return known;
  };
  let entryId: string | undefined;
  let postings: { account: { currency: string }; amount: AmountE8 }[] = [];
  const judge = () => {
    if (entryId === undefined) return;
    if (postings.length < 2) report.empty.push({ id: entryId });
    for (const [currency, sum] of imbalance(postings))
      report.unbalanced.push({ entry_id: entryId, currency, sum: formatAmount(sum) });
  };
  const sumBatch = async (rows: Awaited<ReturnType<typeof store.nextEntryPostings>>) => {
    for (const row of rows) {
      if (row.entry_id !== entryId) {
        judge();
        entryId = row.entry_id;
        postings = [];
      }
      // An entry without postings comes as one row without a posting.
      if (row.ledger_account_id === null || row.currency === null || row.amount === null || row.day === null)
        continue;
      const amount = amountOf(row.amount);
      postings.push({ account: ofCurrency(row.currency), amount });
      const account = sums.tracked.get(row.ledger_account_id);
      if (account) account.sum += amount;
      const income = sums.incomeAccounts.get(row.ledger_account_id);
      if (income) addIncome(income, row.currency, row.day, entryId, amount);
    }
  };
  await store.openEntryPostings(db, spaceId);
  // The next batch is asked for before this one is summed, so the database reads it meanwhile:
  // at most two batches are held. Both are awaited together, so a failed read or a failed sum
  // fails the check (and its transaction) and neither is left unawaited.
  let rows = await store.nextEntryPostings(db, batch);
  for (;;) {
    const more = rows.length === batch;
    const [next] = await Promise.all([
      more ? store.nextEntryPostings(db, batch) : Promise.resolve([]),
      sumBatch(rows),
    ]);
    if (!more) break;
    rows = next;
  }
  judge();
  await store.closeEntryPostings(db);
}

/** The income days as kept that differ from the sums of their postings, and days only the postings have. */
async function incomeDaysAdrift(
  db: Queryable,
  spaceId: string | undefined,
  incomeAccounts: Map<string, IncomeAccount>,
): Promise<LedgerReport['incomeDays']> {
  const adrift: LedgerReport['incomeDays'] = [];
  for (const kept of await keptIncomeDays(db, spaceId)) {
    const days = incomeAccounts.get(kept.ledger_account_id)?.byCurrency.get(kept.currency);
    const posted = days?.get(kept.day);
    days?.delete(kept.day);
    if (!posted || posted.sum !== amountOf(kept.amount) || BigInt(posted.entries) !== BigInt(kept.entries))
      adrift.push({
        space_id: kept.space_id,
        day: kept.day,
        ledger_account_id: kept.ledger_account_id,
        currency: kept.currency,
      });
  }
  for (const [accountId, income] of incomeAccounts)
    for (const [currency, days] of income.byCurrency)
      for (const day of days.keys())
        adrift.push({ space_id: income.spaceId, day, ledger_account_id: accountId, currency });
  return adrift;
}
