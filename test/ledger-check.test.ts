import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asAmount, formatAmount } from '../src/core/money.ts';
import {
  CHECK_BATCH,
  checkLedger,
  type EntryDraft,
  increase,
  ledgerAccounts,
  postEntries,
  settleAllIncomeDays,
} from '../src/features/ledger/index.ts';
import { uuidv7 } from '../src/platform/crypto.ts';
import { createHarness, type Harness } from './harness.ts';
import { bareEntryRow } from './ledger-rows.ts';

// `tollbook ledger check` reads the postings a batch of entries at a time: a defect filed deep in
// a book of many batches is found as it is in a book read in one batch, and each rule reports
// its own defect and nothing else.

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const ENTRIES = 3_000;
const SMALL_BATCH = 128;

/** Writes ledger rows the way no code path may (the check's defects), bypassing the triggers. */
function behindTheTriggers(write: (tx: typeof h.db) => Promise<unknown>) {
  return h.db.transaction().execute(async (tx) => {
    await sql`SET LOCAL session_replication_role = replica`.execute(tx);
    await write(tx);
  });
}

/** A new book with a EUR bank account and its asset, income and expense ledger accounts. */
async function euroBook(expenseRef: string) {
  const { spaceId } = await h.world();
  const bank = await h.makeAccount(spaceId, { currency: 'EUR' });
  const at = new Date();
  const where = { spaceId, currency: 'EUR', at };
  const asset = await ledgerAccounts.asset(h.db, { ...where, accountId: bank.id });
  const income = await ledgerAccounts.income(h.db, { ...where, resourceId: null });
  const expense = await ledgerAccounts.expense(h.db, { ...where, ref: expenseRef });
  return { spaceId, at, asset, income, expense };
}

describe('ledger check', () => {
  it('finds defects seeded deep in a book of many batches, each by its own rule', async () => {
    const { spaceId, at, asset, income, expense } = await euroBook('check-test');
    const drafts: EntryDraft[] = Array.from({ length: ENTRIES }, (_, index) => ({
      spaceId,
      origin: 'manual',
      kind: 'income',
      occurredOn: `2026-04-${String((index % 30) + 1).padStart(2, '0')}`,
      causeType: 'test',
      causeId: null,
      postings: [
        increase(asset, asAmount(BigInt(100 + index))),
        increase(income, asAmount(BigInt(100 + index))),
      ],
    }));
    for (let start = 0; start < ENTRIES; start += 500)
      await postEntries(h.db, drafts.slice(start, start + 500), at);
    // Half the days settled, the rest still arriving: the check sums both.
    await settleAllIncomeDays(h.db);
    await postEntries(h.db, drafts.slice(0, 10), at);

    const sound = await checkLedger(h.db, spaceId, SMALL_BATCH);
    expect(sound.sound).toBe(true);
    expect(sound).toEqual(await checkLedger(h.db, spaceId, CHECK_BATCH));

    // Entry ids are time-ordered, so the entries filed last are read in the last batches.
    const entries = await h.db
      .selectFrom('ledger_entries')
      .select('id')
      .where('space_id', '=', spaceId)
      .orderBy('id')
      .execute();
    expect(entries.length).toBeGreaterThan(20 * SMALL_BATCH);
    const deep = entries[entries.length - 200]?.id;
    if (deep === undefined) throw new Error('no entry to spoil');
    const emptyEntry = uuidv7();
    await behindTheTriggers(async (tx) => {
      // An extra posting on an untracked expense account: the entry no longer balances.
      await tx
        .insertInto('ledger_postings')
        .values({
          id: randomUUID(),
          space_id: spaceId,
          entry_id: deep,
          ledger_account_id: expense.id,
          currency: 'EUR',
          amount: '0.00000005',
          occurred_on: '2026-04-10',
        })
        .execute();
      // An entry with no postings at all.
      await tx
        .insertInto('ledger_entries')
        .values(bareEntryRow({ id: emptyEntry, spaceId, day: '2026-04-11', at }))
        .execute();
      // The bank's cached balance one unit off its postings.
      await sql`UPDATE ledger_accounts SET balance = balance + 1 WHERE id = ${asset.id}`.execute(tx);
      // One settled income day off its postings.
      await sql`UPDATE ledger_income_days SET amount = amount - 1
        WHERE space_id = ${spaceId} AND day = '2026-04-20'`.execute(tx);
    });

    const report = await checkLedger(h.db, spaceId, SMALL_BATCH);
    expect(report.sound).toBe(false);
    expect(report.unbalanced).toEqual([{ entry_id: deep, currency: 'EUR', sum: formatAmount(asAmount(5n)) }]);
    expect(report.empty).toEqual([{ id: emptyEntry }]);
    expect(report.drifted.map((row) => row.id)).toEqual([asset.id]);
    expect(report.overdrawn).toEqual([]);
    expect(report.incomeDays).toEqual([
      { space_id: spaceId, day: '2026-04-20', ledger_account_id: income.id, currency: 'EUR' },
    ]);
    // Read in one batch or in many, the same findings.
    expect(await checkLedger(h.db, spaceId, CHECK_BATCH)).toEqual(report);
    // The whole database's check finds them too.
    const everything = await checkLedger(h.db, undefined, SMALL_BATCH * 8);
    expect(everything.unbalanced.map((row) => row.entry_id)).toContain(deep);
    expect(everything.empty.map((row) => row.id)).toContain(emptyEntry);
  });

  it('finds the same whether a batch ends between entries or inside one', async () => {
    const { spaceId, at, asset, income, expense } = await euroBook('check-boundaries');
    // Entries of two and of three postings, so batches of every small size end inside some.
    const drafts: EntryDraft[] = Array.from({ length: 12 }, (_, index) => ({
      spaceId,
      origin: 'manual',
      kind: 'income',
      occurredOn: `2026-05-${String((index % 3) + 1).padStart(2, '0')}`,
      causeType: 'test',
      causeId: null,
      postings:
        index % 2 === 0
          ? [increase(asset, asAmount(300n)), increase(income, asAmount(300n))]
          : [
              increase(asset, asAmount(300n)),
              increase(income, asAmount(100n)),
              increase(income, asAmount(200n)),
            ],
    }));
    const entryIds = await postEntries(h.db, drafts, at);
    const threePostings = entryIds[5];
    if (threePostings === undefined) throw new Error('no entry to spoil');
    const emptyEntries = [uuidv7(), uuidv7()];
    await behindTheTriggers(async (tx) => {
      // A fourth posting on an entry of three: off balance.
      await tx
        .insertInto('ledger_postings')
        .values({
          id: randomUUID(),
          space_id: spaceId,
          entry_id: threePostings,
          ledger_account_id: expense.id,
          currency: 'EUR',
          amount: '0.00000007',
          occurred_on: '2026-05-02',
        })
        .execute();
      // Two entries without postings, next to each other in key order at the end of the book.
      for (const id of emptyEntries)
        await tx
          .insertInto('ledger_entries')
          .values(bareEntryRow({ id, spaceId, day: '2026-05-03', at }))
          .execute();
    });

    const whole = await checkLedger(h.db, spaceId, CHECK_BATCH);
    expect(whole.unbalanced).toEqual([
      { entry_id: threePostings, currency: 'EUR', sum: formatAmount(asAmount(7n)) },
    ]);
    expect(whole.empty).toEqual([...emptyEntries].sort().map((id) => ({ id })));
    expect(whole.drifted).toEqual([]);
    expect(whole.incomeDays).toEqual([]);
    for (const batch of [1, 2, 3, 4, 5, 7]) expect(await checkLedger(h.db, spaceId, batch)).toEqual(whole);
  });
});
