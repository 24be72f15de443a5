import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import { createHarness, type Harness, type Key } from './harness.ts';

// A mint on a crypto account picks an asked amount no other open request of the account asks
// for, probing the open-dues index rung by rung below its price (never reading every open
// request); a unique index declares one open ask per amount. Concurrent mints take turns on the
// account's lock; run it on PostgreSQL (DATABASE_URL) for real concurrency.

let h: Harness;
let key: Key;
const clock = new ManualClock('2026-03-01T00:00:00Z');
beforeAll(async () => {
  // Hundreds of mints from one key: the per-key rate limit is not what this file tests.
  h = await createHarness({ clock, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  ({ key } = await h.world({ scopes: ['payments'] }));
});
afterAll(() => h.close());

const mint = (payload: Record<string, unknown>) =>
  h.inject({ method: 'POST', url: '/integration/payment-requests', key: key.key, payload });

describe('POST /integration/payment-requests: unique asked amounts', () => {
  /** Mints `count` requests on `account` at the given prices, `lanes` at a time. */
  async function mintMany(account: string, prices: string[], lanes: number) {
    const out: { amount: string; amount_due: string }[] = [];
    let next = 0;
    const lane = async () => {
      while (next < prices.length) {
        const res = await mint({ account_id: account, amount: prices[next++]! });
        expect(res.statusCode).toBe(201);
        out.push(res.json());
      }
    };
    await Promise.all(Array.from({ length: lanes }, lane));
    return out;
  }

  it('gives concurrent mints at one price distinct amounts among hundreds of open requests on the address', async () => {
    const account = (await h.makeWallet(key.spaceId, `0x${'a7'.repeat(20)}`)).id;
    // 300 open requests at other prices (some sharing one), then 30 at once at a price already asked.
    const others = Array.from({ length: 300 }, (_, index) => `${(index % 120) + 2}.5`);
    await mintMany(account, [...others, '50'], 8);
    const minted = await mintMany(account, Array(30).fill('50'), 30);
    const dues = minted.map((request) => request.amount_due);
    expect(new Set([...dues, '50.00000000']).size).toBe(31);
    for (const due of dues) {
      const tag = 50n * 100_000_000n - BigInt(due.replace('.', ''));
      expect(tag > 0n && tag < 1_000_000n && tag % 100n === 0n).toBe(true);
    }
  });

  it("counts another price's tagged amounts when they fall in this price's window", async () => {
    const account = (await h.makeWallet(key.spaceId, `0x${'b8'.repeat(20)}`)).id;
    // Two open requests at 3: they ask 3.000000 and 2.999999.
    const first = await mintMany(account, ['3', '3'], 1);
    expect(first.map((request) => request.amount_due).sort()).toEqual(['2.99999900', '3.00000000']);
    // A price of 2.999999 is its own price already asked by the second: it steps below it.
    const [next] = await mintMany(account, ['2.999999'], 1);
    expect(next!.amount_due).toBe('2.99999800');
    // A price one cent above is outside their window: it asks for itself.
    const [above] = await mintMany(account, ['3.01'], 1);
    expect(above!.amount_due).toBe('3.01000000');
  });

  it('takes the amount of a request that lapsed, which is then cancelled (one open ask per amount)', async () => {
    const account = (await h.makeWallet(key.spaceId, `0x${'d9'.repeat(20)}`)).id;
    const early = await mint({
      account_id: account,
      amount: '9',
      expires_at: new Date(clock.now().getTime() + 61_000).toISOString(),
    });
    expect(early.statusCode).toBe(201);
    clock.advance(120_000);
    const later = await mint({ account_id: account, amount: '9' });
    expect(later.json().amount_due).toBe('9.00000000');
    const rows = await h.db
      .selectFrom('payment_requests')
      .select(['token', 'status'])
      .where('account_id', '=', account)
      .orderBy('created_at')
      .execute();
    expect(rows).toEqual([
      { token: early.json().token, status: 'cancelled' },
      { token: later.json().token, status: 'active' },
    ]);
  });
});
