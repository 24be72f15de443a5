import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type Key, type User } from './harness.ts';

// The Push sources screen's reasons and pages: each refused row of a batch is kept with its
// reason (app API and page), and the batches list pages by cursor with its filter kept.

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

type World = { owner: User; spaceId: string; key: Key };
const cookie = (token: string) => ({ cookie: `tb_session=${token}` });
const pushWorld = (source = 'erp') =>
  h.world({ scopes: ['transactions'], push_source: source }) as Promise<World>;
const row = (externalId: string, extra: Record<string, unknown> = {}) => ({
  external_id: externalId,
  account_key: 'bank-eur',
  currency: 'EUR',
  occurred_on: '2026-03-15',
  amount: '10.25',
  ...extra,
});
const push = (key: Key, rows: unknown[]) =>
  h.inject({ method: 'POST', url: '/integration/transactions', key: key.key, payload: { rows } });
const rejections = (world: World, batchId: string, token = world.owner.token) =>
  h.inject({
    method: 'GET',
    url: `/app/api/spaces/${world.spaceId}/push-batches/${batchId}/rejections`,
    session: token,
  });

/** A batch of two good rows and four refused ones, each for a different reason. */
const MIXED = [
  row('good-1'),
  { account_key: 'bank-eur', currency: 'EUR', occurred_on: '2026-03-15', amount: '1' },
  row('bad-amount', { amount: 'ten' }),
  'not an object',
  row('good-2', { amount: '-2' }),
  row('<script>alert(1)</script>', { occurred_on: '2026-02-30' }),
  row('other-currency', { currency: 'USD' }),
];

describe('Push sources: rejected rows and their reasons', () => {
  it('keeps every refused row with the reason the push answered, in pushed order', async () => {
    const world = await pushWorld();
    const pushed = await push(world.key, MIXED);
    expect(pushed.statusCode).toBe(200);
    const answer = pushed.json();
    expect(answer.booked).toBe(2);
    expect(answer.rejected).toBe(5);
    const res = await rejections(world, answer.batch_id);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.batch).toMatchObject({ id: answer.batch_id, rejected: 5, booked: 2, rows_total: 7 });
    expect(body.items).toEqual(answer.errors);
    expect(body.items.map((item: { index: number }) => item.index)).toEqual([1, 2, 3, 5, 6]);
    expect(body.items[0]).toEqual({
      index: 1,
      external_id: null,
      error: 'invalid_row',
      detail: 'external_id is required.',
    });
    expect(body.items[4]).toMatchObject({ external_id: 'other-currency', error: 'currency_mismatch' });
  });

  it('shows the reasons when a batch is opened on the page, as text', async () => {
    const world = await pushWorld();
    const batchId = (await push(world.key, MIXED)).json().batch_id as string;
    const path = `/app/books/${world.spaceId}/push`;
    const list = await h.inject({ method: 'GET', url: path, headers: cookie(world.owner.token) });
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain(`open=${batchId}#rejections`);
    expect(list.body).not.toContain('Rejected rows of the batch');
    const opened = await h.inject({
      method: 'GET',
      url: `${path}?open=${batchId}`,
      headers: cookie(world.owner.token),
    });
    expect(opened.statusCode).toBe(200);
    expect(opened.body).toContain('Rejected rows of the batch');
    expect(opened.body).toContain('external_id is required.');
    expect(opened.body).toContain('amount is not a decimal.');
    expect(opened.body).toContain('The account bank-eur holds EUR, not USD.');
    expect(opened.body).toContain('&lt;script>alert(1)&lt;/script>');
    expect(opened.body).not.toContain('<script>alert(1)</script>');
  });

  it('answers 404 for a batch of another book, and refuses members below admin', async () => {
    const world = await pushWorld();
    const other = await pushWorld();
    const batchId = (await push(other.key, MIXED)).json().batch_id as string;
    expect((await rejections(world, batchId)).statusCode).toBe(404);
    const page = await h.inject({
      method: 'GET',
      url: `/app/books/${world.spaceId}/push?open=${batchId}`,
      headers: cookie(world.owner.token),
    });
    expect(page.statusCode).toBe(404);
    const stranger = await h.signup('Stranger');
    expect((await rejections(other, batchId, stranger.token)).statusCode).toBe(404);
    const viewer = await h.signup('Viewer');
    await h.addMember(other.owner, other.spaceId, viewer, 'viewer');
    expect((await rejections(other, batchId, viewer.token)).statusCode).toBe(403);
    const noSession = await h.inject({
      method: 'GET',
      url: `/app/books/${other.spaceId}/push?open=${batchId}`,
    });
    expect(noSession.statusCode).toBe(303);
    expect(noSession.headers.location).toContain('/app/login');
  });

  it('keeps each of two concurrent batches its own reasons', async () => {
    const world = await pushWorld();
    const [first, second] = await Promise.all([
      push(world.key, [row('a-ok'), row('a-bad', { amount: 'x' })]),
      push(world.key, [row('b-bad', { currency: 'E' }), row('b-ok'), row('b-bad-2', { amount: '0' })]),
    ]);
    const a = (await rejections(world, first!.json().batch_id)).json();
    const b = (await rejections(world, second!.json().batch_id)).json();
    expect(a.items.map((item: { external_id: string }) => item.external_id)).toEqual(['a-bad']);
    expect(b.items.map((item: { external_id: string }) => item.external_id)).toEqual(['b-bad', 'b-bad-2']);
  });

  it('keeps a whole batch of 500 refused rows', async () => {
    const world = await pushWorld();
    const rows = Array.from({ length: 500 }, (_, index) => row(`r-${index}`, { amount: 'nope' }));
    const batchId = (await push(world.key, rows)).json().batch_id as string;
    const body = (await rejections(world, batchId)).json();
    expect(body.items).toHaveLength(500);
    expect(body.items[499]).toMatchObject({ index: 499, external_id: 'r-499', error: 'invalid_row' });
  });
});

describe('Push sources: batches page by cursor, 50 a page, newest first', () => {
  it('puts the 51st batch on page 2 (app API and page), keeping the source filter', async () => {
    const world = await pushWorld('bank-feed');
    for (let index = 0; index < 51; index++) {
      expect((await push(world.key, [row(`p-${index}`)])).statusCode).toBe(200);
    }
    const api = (query: string) =>
      h.inject({
        method: 'GET',
        url: `/app/api/spaces/${world.spaceId}/push-batches?${query}`,
        session: world.owner.token,
      });
    const first = (await api('push_source=bank-feed')).json();
    expect(first.items).toHaveLength(50);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = (await api(`push_source=bank-feed&cursor=${first.next_cursor}`)).json();
    expect(second.items).toHaveLength(1);
    expect(second.next_cursor).toBeNull();
    const ids = new Set([...first.items, ...second.items].map((item: { id: string }) => item.id));
    expect(ids.size).toBe(51);
    const times = [...first.items, ...second.items].map((item: { created_at: string }) => item.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect((await api('push_source=nobody')).json().items).toEqual([]);
    expect((await api('cursor=garbage!')).statusCode).toBe(422);

    const path = `/app/books/${world.spaceId}/push`;
    const page1 = await h.inject({
      method: 'GET',
      url: `${path}?push_source=bank-feed`,
      headers: cookie(world.owner.token),
    });
    const next = /href="([^"]*cursor=[^"]*)"[^>]*>Next page/.exec(page1.body)?.[1]?.replaceAll('&amp;', '&');
    expect(next).toContain('push_source=bank-feed');
    const page2 = await h.inject({ method: 'GET', url: next!, headers: cookie(world.owner.token) });
    expect(page2.statusCode).toBe(200);
    expect(page2.body).toContain(`/push/${second.items[0].id}/undo`);
    expect(page2.body).not.toContain(`/push/${first.items[0].id}/undo`);
    expect(page2.body).toContain('First page');
  });
});
