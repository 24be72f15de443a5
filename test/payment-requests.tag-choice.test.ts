import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AmountE8, asAmount, formatAmount, UNIT } from '../src/core/money.ts';
import { readAmount } from '../src/features/ledger/index.ts';
import { TAG_LIMIT, tagLadder } from '../src/features/payment-requests/domain.ts';
import { firstFreeAsk } from '../src/features/payment-requests/store.ts';
import { createHarness, type Harness } from './harness.ts';

// The mint chooses its asked amount by probing the open-dues index rung by rung. The rule it
// replaced read every open amount in the window into a set and walked the ladder in memory; it
// stays here as the oracle, and the two must agree on any book.

/** The replaced rule, verbatim in meaning: the first rung not in `taken`, null when none is left. */
function oracleAsk(amount: AmountE8, decimals: number, taken: ReadonlySet<bigint>): AmountE8 | null {
  const step = 10n ** BigInt(8 - decimals);
  for (let tag = 0n; tag < TAG_LIMIT; tag += step) {
    const asked = amount - tag;
    if (asked <= 0n) return null;
    if (!taken.has(asked)) return asAmount(asked);
  }
  return null;
}

const NOW = new Date('2026-06-01T12:00:00Z');
const HOUR_MS = 3_600_000;

type Row = { due: bigint; status: 'active' | 'paid' | 'cancelled'; lapsed: boolean };

let h: Harness;
let spaceId: string;
let accountId: string;
beforeAll(async () => {
  h = await createHarness();
  ({ spaceId } = await h.world({ scopes: ['payments'] }));
  accountId = (await h.makeWallet(spaceId, `0x${'c4'.repeat(20)}`)).id;
});
afterAll(() => h.close());

async function replaceRequests(rows: readonly Row[]) {
  await sql`DELETE FROM payment_requests WHERE account_id = ${accountId}::uuid`.execute(h.db);
  // In chunks: one statement carries at most 65,535 parameters.
  for (let start = 0; start < rows.length; start += 500) await insertRows(rows.slice(start, start + 500));
}

async function insertRows(rows: readonly Row[]) {
  await h.db
    .insertInto('payment_requests')
    .values(
      rows.map((row) => ({
        id: randomUUID(),
        space_id: spaceId,
        token: `pr_${randomUUID()}`,
        account_id: accountId,
        key_id: null,
        purpose: 'sale' as const,
        client_credit_id: null,
        amount: formatAmount(asAmount(row.due)),
        amount_due: formatAmount(asAmount(row.due)),
        currency: 'USDC',
        status: row.status,
        memo: '',
        resource_id: null,
        expires_at: new Date(NOW.getTime() + (row.lapsed ? -HOUR_MS : HOUR_MS)),
        created_at: new Date(NOW.getTime() - 2 * HOUR_MS),
      })),
    )
    .execute();
}

async function chosen(price: AmountE8): Promise<AmountE8 | null> {
  const ladder = tagLadder(price, 6)!;
  const due = await firstFreeAsk(
    h.db,
    accountId,
    { top: formatAmount(ladder.top), step: formatAmount(ladder.step), rungs: ladder.rungs },
    NOW,
  );
  return due === null ? null : readAmount(due);
}

/** The oracle's view of the same rows: the amounts open requests (active, in time) ask for. */
const openDues = (rows: readonly Row[]) =>
  new Set(rows.filter((row) => row.status === 'active' && !row.lapsed).map((row) => row.due));

describe('the free tag chosen by the open-dues index', () => {
  it('gives the answer of the replaced rule on any set of requests', async () => {
    const price = asAmount(3n * UNIT);
    const rung = fc.integer({ min: -5, max: 40 });
    const row = fc.record({
      due: rung.map((step) => (price as bigint) - BigInt(step) * 100n),
      status: fc.constantFrom('active' as const, 'active' as const, 'paid' as const, 'cancelled' as const),
      lapsed: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(row, { maxLength: 60 }), async (rows) => {
        await replaceRequests(rows);
        expect(await chosen(price)).toBe(oracleAsk(price, 6, openDues(rows)));
      }),
      { numRuns: 60 },
    );
  }, 120_000);

  it('agrees with it near zero, where the ladder ends above nothing', async () => {
    const price = asAmount(300n);
    await fc.assert(
      fc.asyncProperty(fc.subarray([300n, 200n, 100n]), async (dues) => {
        const rows = dues.map((due) => ({ due, status: 'active' as const, lapsed: false }));
        await replaceRequests(rows);
        expect(await chosen(price)).toBe(oracleAsk(price, 6, openDues(rows)));
      }),
      { numRuns: 10 },
    );
  });

  it('agrees with it among 10,000 open requests: the one gap left, then none', async () => {
    const price = asAmount(7n * UNIT);
    const gap = 6_123;
    const rows: Row[] = Array.from({ length: 10_000 }, (_, step) => ({
      due: (price as bigint) - BigInt(step) * 100n,
      status: 'active' as const,
      lapsed: step === gap,
    }));
    await replaceRequests(rows);
    const expected = oracleAsk(price, 6, openDues(rows));
    expect(expected).toBe((price as bigint) - BigInt(gap) * 100n);
    expect(await chosen(price)).toBe(expected);
    rows[gap] = { ...rows[gap]!, lapsed: false };
    await replaceRequests(rows);
    expect(oracleAsk(price, 6, openDues(rows))).toBeNull();
    expect(await chosen(price)).toBeNull();
  }, 120_000);
});

describe('the unique index on open asks', () => {
  it('refuses a second active request asking the same amount on one account, and allows it once the first closes', async () => {
    await replaceRequests([]);
    const insert = (status: 'active' | 'cancelled') =>
      h.db
        .insertInto('payment_requests')
        .values({
          id: randomUUID(),
          space_id: spaceId,
          token: `pr_${randomUUID()}`,
          account_id: accountId,
          key_id: null,
          purpose: 'sale',
          client_credit_id: null,
          amount: '4',
          amount_due: '4',
          currency: 'USDC',
          status,
          memo: '',
          resource_id: null,
          expires_at: new Date(NOW.getTime() + HOUR_MS),
          created_at: NOW,
          unique_ask: true,
        })
        .execute();
    await insert('active');
    await expect(insert('active')).rejects.toThrow(/payment_requests_unique_ask_idx/);
    await insert('cancelled');
    await sql`UPDATE payment_requests SET status = 'cancelled' WHERE account_id = ${accountId}::uuid`.execute(
      h.db,
    );
    await insert('active');
    const open = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM payment_requests
      WHERE account_id = ${accountId}::uuid AND status = 'active'`.execute(h.db);
    expect(open.rows[0]!.n).toBe(1);
    // Clearing the 10,000 rows the test before left takes a while on embedded PGlite under load.
  }, 120_000);
});
