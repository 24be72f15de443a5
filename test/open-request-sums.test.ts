import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import { asAmount } from '../src/core/money.ts';
import { readAmount } from '../src/features/ledger/index.ts';
import {
  lapseRequests,
  mintRequest,
  openRequestTotals,
  reverseChainSettlements,
  settleAllOpenSums,
  settlePaymentRequest,
} from '../src/features/payment-requests/index.ts';
import { cancelRequest } from '../src/features/payment-requests/service.ts';
import { createHarness, type Harness } from './harness.ts';

// Home's open payment requests, pre-summed (open-sums.ts), against a plain count of the book's
// active requests still in time: whatever wrote to the requests (mints on a bank account and on
// a tagged crypto account, settlements in one statement or under the lock, overpayments, chain
// reversals, cancels, the lapse job, the clock running past deadlines), and whenever the
// arrivals were settled, the two agree.

const clock = new ManualClock('2026-03-01T12:00:00Z');
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ clock });
});
afterAll(() => h.close());

/** The figure as Home read it before the sums: every active request of the book, still in time. */
async function plainTotals(spaceId: string, now: Date) {
  const result = await sql<{ currency: string; count: string; open: string }>`
    SELECT currency, COUNT(*)::text AS count,
      COALESCE(SUM(GREATEST(amount_due - amount_received, 0)), 0)::text AS open
    FROM payment_requests
    WHERE space_id = ${spaceId} AND status = 'active' AND expires_at > ${now}
    GROUP BY currency ORDER BY currency`.execute(h.db);
  return result.rows.map((row) => ({
    currency: row.currency,
    count: Number(row.count),
    open: readAmount(row.open),
  }));
}

type Book = { spaceId: string; bankId: string; walletId: string; tokens: string[]; chainRefs: string[] };

async function book(): Promise<Book> {
  const { spaceId } = await h.world();
  const bank = await h.makeAccount(spaceId, { currency: 'USD' });
  const wallet = await h.makeWallet(spaceId);
  return { spaceId, bankId: bank.id, walletId: wallet.id, tokens: [], chainRefs: [] };
}

type Step =
  | { kind: 'mint'; crypto: boolean; dollars: number; minutes: number }
  | { kind: 'pay'; pick: number; part: 'some' | 'all' | 'more'; oneStatement: boolean; chain: boolean }
  | { kind: 'reverse'; pick: number }
  | { kind: 'cancel'; pick: number }
  | { kind: 'tick'; minutes: number }
  | { kind: 'lapse' }
  | { kind: 'settle' };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('mint' as const),
      crypto: fc.boolean(),
      dollars: fc.integer({ min: 1, max: 3 }),
      minutes: fc.integer({ min: 1, max: 30 }),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('pay' as const),
      pick: fc.nat(),
      part: fc.constantFrom('some' as const, 'all' as const, 'more' as const),
      oneStatement: fc.boolean(),
      chain: fc.boolean(),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant('reverse' as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }), weight: 1 },
  {
    arbitrary: fc.record({ kind: fc.constant('tick' as const), minutes: fc.integer({ min: 1, max: 60 }) }),
    weight: 1,
  },
  { arbitrary: fc.constant({ kind: 'lapse' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'settle' as const }), weight: 1 },
);

const picked = <T>(items: T[], pick: number): T | undefined => items[pick % Math.max(items.length, 1)];

async function requestOf(token: string) {
  return h.db.selectFrom('payment_requests').selectAll().where('token', '=', token).executeTakeFirstOrThrow();
}

async function apply(b: Book, s: Step) {
  const now = clock.now();
  if (s.kind === 'tick') return clock.advance(s.minutes * 60_000);
  if (s.kind === 'lapse') return void (await lapseRequests({ db: h.db, clock }, 2));
  if (s.kind === 'settle') return void (await settleAllOpenSums(h.db, 3));
  if (s.kind === 'mint') {
    const minted = await h.db.transaction().execute((tx) =>
      mintRequest(
        tx,
        { clock, publicUrl: 'http://127.0.0.1' },
        {
          spaceId: b.spaceId,
          keyId: null,
          accountId: s.crypto ? b.walletId : b.bankId,
          amount: asAmount(BigInt(s.dollars) * 100_000_000n),
          currency: null,
          expiresAt: new Date(now.getTime() + s.minutes * 60_000).toISOString(),
          memo: 'Open sums',
          resource: '',
        },
      ),
    );
    b.tokens.push(minted.token);
    return;
  }
  if (s.kind === 'cancel') {
    const token = picked(b.tokens, s.pick);
    if (token === undefined) return;
    await cancelRequest({ db: h.db, clock, publicUrl: 'http://127.0.0.1' }, b.spaceId, token).catch(
      (error) => {
        // A paid request cannot be cancelled; that refusal writes nothing.
        if ((error as { code?: string }).code !== 'conflict') throw error;
      },
    );
    return;
  }
  if (s.kind === 'reverse') {
    const reference = picked(b.chainRefs, s.pick);
    if (reference === undefined) return;
    b.chainRefs.splice(b.chainRefs.indexOf(reference), 1);
    await h.db
      .transaction()
      .execute((tx) =>
        reverseChainSettlements(tx, { spaceId: b.spaceId, rail: 'chain', reference, at: now }),
      );
    return;
  }
  const token = picked(b.tokens, s.pick);
  if (token === undefined) return;
  const request = await requestOf(token);
  const due = readAmount(request.amount_due);
  const amount = asAmount(s.part === 'some' ? due / 2n : s.part === 'all' ? due : due + 1_000_000n);
  const reference = randomUUID();
  const outcome = await settlePaymentRequest(h.db, {
    spaceId: b.spaceId,
    requestId: request.id,
    amount,
    rail: s.chain ? 'chain' : 'bank',
    reference,
    payer: 'payer',
    at: now,
    // Money a chain transfer already moved is booked even on a lapsed or paid request.
    committed: s.chain,
    seen: s.oneStatement ? request : undefined,
  });
  if (outcome.ok && s.chain) b.chainRefs.push(reference);
}

describe('open request sums', () => {
  it('give Home the count and open amount a plain count of the active requests gives, settled or not', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 16 }), async (steps) => {
        clock.set('2026-03-01T12:00:00Z');
        const b = await book();
        for (const s of steps) {
          await apply(b, s);
          expect(await openRequestTotals(h.db, b.spaceId, clock.now())).toEqual(
            await plainTotals(b.spaceId, clock.now()),
          );
        }
        await settleAllOpenSums(h.db);
        expect(await openRequestTotals(h.db, b.spaceId, clock.now())).toEqual(
          await plainTotals(b.spaceId, clock.now()),
        );
      }),
      {
        numRuns: 60,
        examples: [
          // A lapsed ask on the crypto account taken over by a new mint of the same price.
          [
            [
              { kind: 'mint', crypto: true, dollars: 2, minutes: 1 },
              { kind: 'tick', minutes: 2 },
              { kind: 'mint', crypto: true, dollars: 2, minutes: 5 },
            ],
          ],
          // The lapse job, then a chain transfer booked on the lapsed request and undone.
          [
            [
              { kind: 'mint', crypto: false, dollars: 1, minutes: 1 },
              { kind: 'tick', minutes: 1 },
              { kind: 'lapse' },
              { kind: 'pay', pick: 0, part: 'some', oneStatement: true, chain: true },
              { kind: 'reverse', pick: 0 },
            ],
          ],
        ],
      },
    );
  }, 300_000);

  it('moves every arrival into its book’s totals and leaves none behind, in batches', async () => {
    clock.set('2026-03-01T12:00:00Z');
    const b = await book();
    for (let n = 1; n <= 5; n++)
      await apply(b, { kind: 'mint', crypto: n % 2 === 0, dollars: n, minutes: 30 });
    await apply(b, { kind: 'cancel', pick: 0 });
    const pending = () =>
      h.db
        .selectFrom('payment_request_open_arrivals')
        .select('id')
        .where('space_id', '=', b.spaceId)
        .execute();
    expect(await pending()).toHaveLength(6);
    await settleAllOpenSums(h.db, 2);
    expect(await pending()).toHaveLength(0);
    const totals = await h.db
      .selectFrom('payment_request_open_totals')
      .select(['currency', 'requests', 'open'])
      .where('space_id', '=', b.spaceId)
      .orderBy('currency')
      .execute();
    expect(totals.map((row) => [row.currency, String(row.requests), readAmount(row.open)])).toEqual([
      ['USD', '2', 800_000_000n],
      ['USDC', '2', 600_000_000n],
    ]);
  });

  it('keep count of concurrent mints, payments and cancels on one account while settling runs', async () => {
    clock.set('2026-03-01T12:00:00Z');
    const b = await book();
    for (let n = 0; n < 12; n++) await apply(b, { kind: 'mint', crypto: true, dollars: 2, minutes: 30 });
    const work: Promise<unknown>[] = [];
    for (let n = 0; n < 12; n++) {
      work.push(apply(b, { kind: 'mint', crypto: true, dollars: 2, minutes: 30 }));
      work.push(
        apply(b, {
          kind: 'pay',
          pick: n,
          part: n % 2 === 0 ? 'some' : 'all',
          oneStatement: n % 3 === 0,
          chain: false,
        }),
      );
      if (n % 4 === 0) work.push(apply(b, { kind: 'cancel', pick: n + 1 }));
      work.push(settleAllOpenSums(h.db, 2));
    }
    await Promise.all(work);
    await settleAllOpenSums(h.db);
    const totals = await openRequestTotals(h.db, b.spaceId, clock.now());
    expect(totals).toEqual(await plainTotals(b.spaceId, clock.now()));
    expect(totals[0]?.count).toBeGreaterThan(0);
  });
});
