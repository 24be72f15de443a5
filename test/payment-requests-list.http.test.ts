import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import { createHarness, type Harness } from './harness.ts';

// The payment requests list by status, through every shape of its one query (a status filter or
// none, first page or a cursor's), in the app API: each shape returns exactly its own rows.

const clock = new ManualClock('2026-03-01T12:00:00Z');
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ clock, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

describe('the payment requests list by status', () => {
  it('lists paid, active and lapsed requests apart, newest first, and pages a filter by cursor', async () => {
    const { owner, spaceId, key } = await h.world({ scopes: ['payments'] });
    const bank = await h.makeAccount(spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
    const mint = async (memo: string, expiresAt?: string) => {
      clock.advance(1000);
      const res = await h.inject({
        method: 'POST',
        url: '/integration/payment-requests',
        key: key.key,
        payload: { account_id: bank.id, amount: '3', memo, ...(expiresAt ? { expires_at: expiresAt } : {}) },
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().token as string;
    };
    const lapsing = await mint('lapses', new Date(clock.now().getTime() + 90_000).toISOString());
    const paid = await mint('paid');
    for (let i = 0; i < 51; i++) await mint(`open ${i}`);
    const marked = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/payment-requests/${paid}/mark-paid`,
      session: owner.token,
      payload: { amount: '3', reference: 'bank ref' },
    });
    expect(marked.statusCode, marked.body).toBe(200);
    clock.advance(180_000);
    const list = async (query: string) => {
      const res = await h.inject({
        method: 'GET',
        url: `/app/api/spaces/${spaceId}/payment-requests${query}`,
        session: owner.token,
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as {
        items: { token: string; memo: string; status: string }[];
        next_cursor: string | null;
      };
    };
    expect((await list('?status=paid')).items.map((item) => item.token)).toEqual([paid]);
    expect((await list('?status=cancelled')).items.map((item) => item.token)).toEqual([lapsing]);
    const active = await list('?status=active');
    expect(active.items).toHaveLength(50);
    expect(active.items[0]?.memo).toBe('open 50');
    expect(active.items.every((item) => item.status === 'active')).toBe(true);
    const rest = await list(`?status=active&cursor=${active.next_cursor}`);
    expect(rest.items.map((item) => item.memo)).toEqual(['open 0']);
    expect(rest.next_cursor).toBeNull();
    const all = await list('');
    const second = await list(`?cursor=${all.next_cursor}`);
    expect([...all.items, ...second.items].map((item) => item.token).slice(-2)).toEqual([paid, lapsing]);
    const olderPaid = await list(`?status=paid&cursor=${all.next_cursor}`);
    expect(olderPaid.items.map((item) => item.token)).toEqual([paid]);
  });
});
