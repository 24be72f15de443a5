import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDateOf } from '../src/core/day.ts';
import { asAmount, formatAmount } from '../src/core/money.ts';
import { windowStart } from '../src/features/home/domain.ts';
import {
  checkLedger,
  type EntryDraft,
  incomeByDay,
  incomeRows,
  increase,
  type LedgerAccountRef,
  ledgerAccounts,
  postEntries,
  postEntry,
  readAmount,
  reverseEntry,
  settleAllIncomeDays,
} from '../src/features/ledger/index.ts';
import { createHarness, type Harness } from './harness.ts';

// The pre-summed income days against a plain sum over the postings: whatever was filed, by
// whichever path, on whichever day, and whenever the arrivals were settled, Home's money in and
// the Income screen's rows are the ledger's own figures.

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

type Books = {
  spaceId: string;
  assets: Record<string, LedgerAccountRef>;
  incomes: Record<string, LedgerAccountRef[]>;
  expenses: Record<string, LedgerAccountRef>;
};

const CURRENCIES = ['EUR', 'USD'] as const;

async function books(): Promise<Books> {
  const { spaceId } = await h.world();
  const at = new Date();
  const out: Books = { spaceId, assets: {}, incomes: {}, expenses: {} };
  for (const currency of CURRENCIES) {
    const account = await h.makeAccount(spaceId, { currency });
    const where = { spaceId, currency, at };
    out.assets[currency] = await ledgerAccounts.asset(h.db, { ...where, accountId: account.id });
    out.incomes[currency] = [
      await ledgerAccounts.income(h.db, { ...where, resourceId: null }),
      await ledgerAccounts.income(h.db, { ...where, resourceId: 'endpoint-a' }),
    ];
    out.expenses[currency] = await ledgerAccounts.expense(h.db, { ...where, ref: 'test' });
  }
  return out;
}

/** One step of a book's life: an entry filed by one of the ledger's paths, or a settling run. */
type Step =
  | { kind: 'settle' }
  | {
      kind: 'sale' | 'bulk' | 'no-balance' | 'reversal';
      currency: (typeof CURRENCIES)[number];
      income: number;
      dayBack: number;
      cents: number;
    };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.constant({ kind: 'settle' as const }),
  fc.record({
    kind: fc.constantFrom('sale' as const, 'bulk' as const, 'no-balance' as const, 'reversal' as const),
    currency: fc.constantFrom(...CURRENCIES),
    income: fc.integer({ min: 0, max: 1 }),
    dayBack: fc.integer({ min: -1, max: 34 }),
    cents: fc.integer({ min: 1, max: 100_000 }),
  }),
);

const dayOf = (today: string, back: number) => windowStart(today, back + 1);

async function apply(b: Books, today: string, s: Step, filed: string[]) {
  if (s.kind === 'settle') return void (await settleAllIncomeDays(h.db, 3));
  const income = b.incomes[s.currency]![s.income]!;
  const amount = asAmount(BigInt(s.cents) * 1_000_000n);
  const draft: EntryDraft = {
    spaceId: b.spaceId,
    origin: 'manual',
    kind: 'income',
    occurredOn: dayOf(today, s.dayBack),
    causeType: 'test',
    causeId: randomUUID(),
    postings: [
      increase(s.kind === 'no-balance' ? b.expenses[s.currency]! : b.assets[s.currency]!, amount),
      increase(income, amount),
    ],
  };
  const at = new Date();
  if (s.kind === 'bulk') {
    const twins = [draft, { ...draft, causeId: randomUUID() }];
    filed.push(...(await h.db.transaction().execute((tx) => postEntries(tx, twins, at))));
    return;
  }
  if (s.kind === 'reversal' && filed.length > 0) {
    const undone = filed.shift()!;
    await h.db
      .transaction()
      .execute((tx) => reverseEntry(tx, b.spaceId, undone, at, dayOf(today, s.dayBack)));
    return;
  }
  const posted = await h.db.transaction().execute((tx) => postEntry(tx, draft, at));
  if (!posted.ok) throw new Error('the entry was refused');
  filed.push(posted.entryId);
}

/** Money in per day and currency from `fromDay` on, summed straight from the postings. */
async function plainTotals(spaceId: string, fromDay: string) {
  const result = await sql<{ day: string; currency: string; amount: string }>`
    SELECT p.occurred_on::text AS day, p.currency, (-SUM(p.amount))::text AS amount
    FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.ledger_account_id
    WHERE a.space_id = ${spaceId} AND a.kind = 'income' AND p.occurred_on >= ${fromDay}::date
    GROUP BY p.occurred_on, p.currency ORDER BY p.occurred_on, p.currency`.execute(h.db);
  return result.rows.map((row) => ({ day: row.day, currency: row.currency, amount: readAmount(row.amount) }));
}

/** The Income screen's rows, straight from the postings, newest first. */
async function plainRows(spaceId: string) {
  const result = await sql<{ ref: string; currency: string; day: string; amount: string; entries: string }>`
    SELECT a.ref, p.currency, p.occurred_on::text AS day, (-SUM(p.amount))::text AS amount,
      COUNT(DISTINCT p.entry_id)::text AS entries
    FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.ledger_account_id
    WHERE a.space_id = ${spaceId} AND a.kind = 'income'
    GROUP BY a.ref, p.currency, p.occurred_on
    ORDER BY p.occurred_on DESC, a.ref DESC, p.currency DESC`.execute(h.db);
  return result.rows;
}

/** The Income screen's rows, page after page by its cursor. */
async function everyPage(spaceId: string, ref: string | undefined, limit: number) {
  const rows: Awaited<ReturnType<typeof incomeRows>>['items'] = [];
  let cursor: string | undefined;
  do {
    const page = await incomeRows(h.db, spaceId, { ref, cursor, limit });
    rows.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return rows;
}

describe('income days', () => {
  it('gives Home and the Income screen the figures a plain sum over the postings gives, settled or not', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 14 }),
        // The moment Home is read: within a few minutes either side of a midnight.
        fc.integer({ min: -300, max: 300 }),
        fc.integer({ min: 1, max: 4 }),
        async (steps, secondsFromMidnight, limit) => {
          const b = await books();
          const now = new Date(Date.parse('2026-03-01T00:00:00Z') + secondsFromMidnight * 1000);
          const today = utcDateOf(now);
          const filed: string[] = [];
          for (const s of steps) await apply(b, today, s, filed);
          const from = windowStart(today, 30);
          expect(await incomeByDay(h.db, b.spaceId, from)).toEqual(await plainTotals(b.spaceId, from));
          for (const ref of [undefined, 'endpoint-a']) {
            const pages = await everyPage(b.spaceId, ref, limit);
            const plain = (await plainRows(b.spaceId)).filter((row) => ref === undefined || row.ref === ref);
            expect(pages.map((row) => [row.day, row.ref, row.currency, String(row.entries)])).toEqual(
              plain.map((row) => [row.day, row.ref, row.currency, row.entries]),
            );
            expect(pages.map((row) => row.amount)).toEqual(
              plain.map((row) => formatAmount(readAmount(row.amount))),
            );
          }
          expect((await checkLedger(h.db, b.spaceId)).incomeDays).toEqual([]);
        },
      ),
      { numRuns: 12 },
    );
  }, 300_000);

  it('moves every arrival into its day and leaves none behind, in batches', async () => {
    const b = await books();
    const today = utcDateOf(new Date());
    const filed: string[] = [];
    for (let back = 0; back < 7; back++)
      await apply(
        b,
        today,
        { kind: 'sale', currency: 'EUR', income: back % 2, dayBack: back, cents: 100 },
        filed,
      );
    const pending = () =>
      h.db
        .selectFrom('ledger_income_arrivals')
        .select('entry_id')
        .where('space_id', '=', b.spaceId)
        .execute();
    expect(await pending()).toHaveLength(7);
    await settleAllIncomeDays(h.db, 2);
    expect(await pending()).toHaveLength(0);
    const days = await h.db
      .selectFrom('ledger_income_days')
      .selectAll()
      .where('space_id', '=', b.spaceId)
      .execute();
    expect(days).toHaveLength(7);
    expect(days.map((row) => Number(row.entries))).toEqual([1, 1, 1, 1, 1, 1, 1]);
  });

  it('has the ledger check find a day that differs from its postings, and only that one', async () => {
    const b = await books();
    const today = utcDateOf(new Date());
    const filed: string[] = [];
    for (const back of [0, 1])
      await apply(b, today, { kind: 'sale', currency: 'USD', income: 0, dayBack: back, cents: 500 }, filed);
    await settleAllIncomeDays(h.db);
    await apply(b, today, { kind: 'sale', currency: 'USD', income: 0, dayBack: 1, cents: 700 }, filed);
    expect((await checkLedger(h.db, b.spaceId)).incomeDays).toEqual([]);
    await h.db
      .updateTable('ledger_income_days')
      .set({ amount: '-1' })
      .where('space_id', '=', b.spaceId)
      .where('day', '=', today)
      .execute();
    const report = await checkLedger(h.db, b.spaceId);
    expect(report.sound).toBe(false);
    expect(report.incomeDays.map((row) => row.day)).toEqual([today]);
  });
});
