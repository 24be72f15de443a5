import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import type { Body } from './chain/x402-setup.ts';
import { createHarness, type Harness } from './harness.ts';

// The Endpoints screen (a card per resource) and the public discovery list of Findable cards.

let h: Harness;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock(new Date('2026-11-10T12:00:00Z'));
  h = await createHarness({ clock, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

const CARD = { number: '4242424242424242', exp: '12/34', cvc: '123' };

async function shop() {
  const world = await h.world({ scopes: ['payments'] });
  const bank = await h.makeAccount(world.spaceId, { kind: 'bank', name: 'USD bank', currency: 'USD' });
  const sell = async (resource: string, amount = '2') => {
    const minted = await h.inject({
      method: 'POST',
      url: '/integration/payment-requests',
      key: world.key.key,
      payload: { account_id: bank.id, amount, resource },
    });
    const paid = await h.inject({ method: 'POST', url: `/pay/${minted.json().token}/card`, payload: CARD });
    expect(paid.json().status).toBe('paid');
  };
  const charge = (clientRef: string, resource: string) =>
    h.inject({
      method: 'POST',
      url: '/integration/charges',
      key: world.key.key,
      payload: { account_id: bank.id, client_ref: clientRef, amount: '0.1', resource, top_up_amount: '5' },
    });
  const endpoints = (token = world.owner.token) =>
    h.inject({ method: 'GET', url: `/app/api/spaces/${world.spaceId}/endpoints`, session: token });
  const patch = (id: string, payload: Record<string, unknown>, token = world.owner.token) =>
    h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${world.spaceId}/endpoints/${id}`,
      session: token,
      payload,
    });
  return { ...world, bank, sell, charge, endpoints, patch };
}

describe('GET /app/api/spaces/{id}/endpoints', () => {
  it('shows each endpoint with its call count, last payment and distinct payers per day for 30 days', async () => {
    const s = await shop();
    const report = 'https://api.example.com/v1/report';
    await s.sell(report);
    clock.advance(60_000);
    await s.sell(report);
    // A client charged to a prepaid balance is a call too: top it up (card), then charge.
    const first = await s.charge('client-a', report);
    await h.inject({ method: 'POST', url: `/pay/${first.json().top_up.token}/card`, payload: CARD });
    clock.advance(60_000);
    expect((await s.charge('client-a', report)).json().paid).toBe(true);
    await s.sell('https://api.example.com/v1/other');
    const res = await s.endpoints();
    expect(res.statusCode).toBe(200);
    const cards = res.json().items as Body[];
    // Newest first: the card made last leads.
    expect(cards.map((card) => card.address)).toEqual(['https://api.example.com/v1/other', report]);
    const card = cards[1]!;
    expect(card).toMatchObject({
      name: '',
      findable: false,
      call_count: 3,
      last_payment_at: clock.now().toISOString(),
    });
    expect(card.payers_per_day).toHaveLength(30);
    expect(card.payers_per_day.at(-1)).toEqual({ date: '2026-11-10', payers: 2 });
    expect(card.payers_per_day[0]).toEqual({ date: '2026-10-12', payers: 0 });
  });

  it("lets any member read, only owners and admins change; another space's card is not found", async () => {
    const s = await shop();
    await s.sell('https://api.example.com/v1/x');
    const id = (await s.endpoints()).json().items[0].id;
    const viewer = await h.signup('Viewer');
    await h.addMember(s.owner, s.spaceId, viewer, 'viewer');
    expect((await s.endpoints(viewer.token)).statusCode).toBe(200);
    expect((await s.patch(id, { findable: true }, viewer.token)).statusCode).toBe(403);
    const other = await shop();
    expect((await other.patch(id, { name: 'mine' })).statusCode).toBe(404);
    const stranger = await h.signup('Stranger');
    expect((await s.endpoints(stranger.token)).statusCode).toBe(404);
  });

  it('renames a card and marks it Findable; refuses an empty or unknown change', async () => {
    const s = await shop();
    await s.sell('https://api.example.com/v1/y');
    const id = (await s.endpoints()).json().items[0].id;
    const res = await s.patch(id, { name: 'Weather', findable: true });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id, name: 'Weather', findable: true, call_count: 1 });
    expect((await s.patch(id, {})).statusCode).toBe(422);
    expect((await s.patch(id, { volume: 3 })).statusCode).toBe(422);
    expect((await s.patch(id, { name: 'x'.repeat(201) })).statusCode).toBe(422);
  });
});

describe('GET /x402/discovery/resources', () => {
  it('lists Findable cards only, with address and name and never volumes, payers or prices', async () => {
    const s = await shop();
    const marker = `https://findable-${Date.now()}.example.com/v1/`;
    await s.sell(`${marker}a`, '7.77');
    await s.sell(`${marker}b`);
    const cards = (await s.endpoints()).json().items as { id: string; address: string }[];
    await s.patch(cards.find((card) => card.address === `${marker}a`)!.id, {
      name: 'Findable A',
      findable: true,
    });
    const all: Body[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = await h.inject({
        method: 'GET',
        url: `/x402/discovery/resources?limit=100&offset=${offset}`,
      });
      expect(page.statusCode).toBe(200);
      all.push(...page.json().items);
      if (offset + 100 >= page.json().pagination.total) break;
    }
    const mine = all.filter((item) => String(item.resource).startsWith(marker));
    expect(mine).toEqual([
      {
        resource: `${marker}a`,
        type: 'http',
        x402Version: 2,
        accepts: [],
        lastUpdated: expect.any(String),
        description: 'Findable A',
      },
    ]);
    const text = JSON.stringify(mine);
    expect(text).not.toContain('7.77');
    expect(text).not.toMatch(/call|payer|count|amount/i);
  });

  it('pages with limit and offset, filters by type, and refuses limits outside 1–100', async () => {
    const page = await h.inject({ method: 'GET', url: '/x402/discovery/resources?limit=1&offset=0' });
    expect(page.json().pagination).toMatchObject({ limit: 1, offset: 0 });
    expect(page.json().items.length).toBeLessThanOrEqual(1);
    const mcp = await h.inject({ method: 'GET', url: '/x402/discovery/resources?type=mcp' });
    expect(mcp.json()).toMatchObject({ items: [], pagination: { total: 0 } });
    for (const bad of ['limit=0', 'limit=101', 'offset=-1', 'limit=abc']) {
      const res = await h.inject({ method: 'GET', url: `/x402/discovery/resources?${bad}` });
      expect(res.statusCode, bad).toBe(422);
    }
  });
});
