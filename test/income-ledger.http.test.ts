import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import type { Body } from './chain/x402-setup.ts';
import { createHarness, type Harness } from './harness.ts';

// The app API behind the Income and Ledger screens: a row per endpoint per day that grows with
// each payment, the payments under it with their payers, and entries with their postings.

let h: Harness;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock(new Date('2026-11-10T12:00:00Z'));
  h = await createHarness({ clock, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

const CARD = { number: '4242424242424242', exp: '12/34', cvc: '123' };
const REPORT = 'https://api.example.com/v1/report';
const today = () => clock.now().toISOString().slice(0, 10);

async function shop() {
  const world = await h.world({ scopes: ['payments'] });
  const bank = await h.makeAccount(world.spaceId, { kind: 'bank', name: 'USD bank', currency: 'USD' });
  const sell = async (amount: string, resource = REPORT) => {
    const minted = await h.inject({
      method: 'POST',
      url: '/integration/payment-requests',
      key: world.key.key,
      payload: { account_id: bank.id, amount, resource },
    });
    const paid = await h.inject({ method: 'POST', url: `/pay/${minted.json().token}/card`, payload: CARD });
    expect(paid.json().status).toBe('paid');
  };
  const get = (path: string, token = world.owner.token) =>
    h.inject({ method: 'GET', url: `/app/api/spaces/${world.spaceId}${path}`, session: token });
  return { ...world, bank, sell, get };
}

describe('GET /app/api/spaces/{id}/income', () => {
  it('keeps one row per endpoint per day that grows with each payment, newest day first, with each payment and its payer under it', async () => {
    const s = await shop();
    await s.sell('2');
    let rows = (await s.get('/income')).json().items as Body[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ day: '2026-11-10', amount: '2.00000000', entries: 1, address: REPORT });
    clock.advance(60_000);
    await s.sell('3.5');
    rows = (await s.get('/income')).json().items;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ day: '2026-11-10', currency: 'USD', amount: '5.50000000', entries: 2 });
    clock.advance(24 * 3600_000);
    await s.sell('1');
    const page = (await s.get('/income')).json();
    expect(page.items.map((row: Body) => [row.day, row.amount])).toEqual([
      ['2026-11-11', '1.00000000'],
      ['2026-11-10', '5.50000000'],
    ]);
    expect(page.next_cursor).toBeNull();

    const query = `ref=${rows[0]!.ref}&day=2026-11-10&currency=USD`;
    const payments = (await s.get(`/income/payments?${query}`)).json();
    expect(payments.items.map((payment: Body) => [payment.amount, payment.payer])).toEqual([
      ['3.50000000', 'card ending 4242'],
      ['2.00000000', 'card ending 4242'],
    ]);
    // Every payment links to its ledger entry.
    const entry = await s.get(`/ledger/entries/${payments.items[0].entry_id}`);
    expect(entry.statusCode).toBe(200);
    expect(
      entry
        .json()
        .postings.map((posting: Body) => posting.amount)
        .sort(),
    ).toEqual(['-3.50000000', '3.50000000']);
  });

  it('pages by cursor, 50 rows a page by default, and refuses a cursor it did not give out', async () => {
    const s = await shop();
    for (let day = 0; day < 3; day++) {
      await s.sell('1');
      clock.advance(24 * 3600_000);
    }
    const first = (await s.get('/income?limit=2')).json();
    expect(first.items).toHaveLength(2);
    const second = (await s.get(`/income?limit=2&cursor=${first.next_cursor}`)).json();
    expect(second.items).toHaveLength(1);
    expect(second.next_cursor).toBeNull();
    expect(new Set([...first.items, ...second.items].map((row: Body) => row.day)).size).toBe(3);
    const bad = await s.get('/income?cursor=bm90LWEtY3Vyc29y');
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toMatchObject({ error: 'invalid_request' });
    expect((await s.get('/income?limit=0')).statusCode).toBe(422);
    expect((await s.get('/income?limit=101')).statusCode).toBe(422);
  });

  it('lets any member read and nobody outside the book: no session is 401, another book is 404', async () => {
    const s = await shop();
    await s.sell('2');
    const viewer = await h.signup('Viewer');
    await h.addMember(s.owner, s.spaceId, viewer, 'viewer');
    expect((await s.get('/income', viewer.token)).statusCode).toBe(200);
    expect((await s.get('/ledger/entries', viewer.token)).statusCode).toBe(200);
    const stranger = await h.signup('Stranger');
    expect((await s.get('/income', stranger.token)).statusCode).toBe(404);
    expect((await s.get('/ledger/entries', stranger.token)).statusCode).toBe(404);
    const anonymous = await h.inject({ method: 'GET', url: `/app/api/spaces/${s.spaceId}/income` });
    expect(anonymous.statusCode).toBe(401);
  });
});

describe("a reversal shrinks the day's income row", () => {
  it("shows an undone batch's reversals under the row, and the row shrinks by them", async () => {
    const world = await h.world({ scopes: ['transactions'], push_source: 'erp' });
    const pushed = await h.inject({
      method: 'POST',
      url: '/integration/transactions',
      key: world.key.key,
      payload: {
        rows: ['r-1', 'r-2'].map((id) => ({
          external_id: id,
          account_key: 'bank',
          currency: 'EUR',
          occurred_on: '2026-03-15',
          amount: '6',
          payee: 'Client',
        })),
      },
    });
    expect(pushed.statusCode).toBe(200);
    const get = (path: string) =>
      h.inject({ method: 'GET', url: `/app/api/spaces/${world.spaceId}${path}`, session: world.owner.token });
    const before = (await get('/income')).json().items as Body[];
    expect(before).toHaveLength(1);
    expect(before[0]).toMatchObject({
      day: '2026-03-15',
      amount: '12.00000000',
      entries: 2,
      label: expect.stringMatching(/^Imported: /),
    });
    const undone = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${world.spaceId}/push-batches/${pushed.json().batch_id}/undo`,
      session: world.owner.token,
    });
    expect(undone.statusCode).toBe(200);
    const after = (await get('/income')).json().items as Body[];
    expect(after[0]).toMatchObject({ day: '2026-03-15', amount: '0.00000000', entries: 4 });
    const query = `ref=${encodeURIComponent(after[0]!.ref)}&day=2026-03-15&currency=EUR`;
    const payments = (await get(`/income/payments?${query}`)).json().items as Body[];
    expect(
      payments.filter((payment) => payment.reverses_entry_id !== null).map((payment) => payment.amount),
    ).toEqual(['-6.00000000', '-6.00000000']);
  });
});

describe('GET /app/api/spaces/{id}/ledger/entries', () => {
  it('lists entries with their postings newest first, filtered by account and by day', async () => {
    const s = await shop();
    const other = await h.makeAccount(s.spaceId, { kind: 'bank', name: 'Second', currency: 'USD' });
    const firstDay = today();
    await s.sell('2');
    clock.advance(24 * 3600_000);
    const secondDay = today();
    await s.sell('4');
    const all = (await s.get('/ledger/entries')).json().items as Body[];
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(all[0]).toMatchObject({
      occurred_on: secondDay,
      origin: 'rail',
      counterparty: 'card ending 4242',
    });
    for (const entry of all) {
      const sum = entry.postings.reduce(
        (total: bigint, posting: Body) => total + BigInt(posting.amount.replace('.', '')),
        0n,
      );
      expect(sum).toBe(0n);
    }
    const onBank = (await s.get(`/ledger/entries?account_id=${s.bank.id}`)).json().items as Body[];
    expect(onBank.map((entry) => entry.occurred_on)).toEqual([secondDay, firstDay]);
    expect((await s.get(`/ledger/entries?account_id=${other.id}`)).json().items).toEqual([]);
    const oneDay = (
      await s.get(`/ledger/entries?account_id=${s.bank.id}&from=${firstDay}&to=${firstDay}`)
    ).json();
    expect(oneDay.items).toHaveLength(1);
    expect((await s.get('/ledger/entries?from=2026-11-12&to=2026-11-10')).statusCode).toBe(422);
    const foreign = await shop();
    const elsewhere = await s.get(`/ledger/entries?account_id=${foreign.bank.id}`);
    expect(elsewhere.statusCode).toBe(422);
    expect(elsewhere.json().error).toBe('account_not_found');
    // An entry of another book is not found from this one.
    await foreign.sell('1');
    const theirs = (await foreign.get('/ledger/entries')).json().items[0].id;
    expect((await s.get(`/ledger/entries/${theirs}`)).statusCode).toBe(404);
  });
});
