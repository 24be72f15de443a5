import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.ts';

// The page routes of Endpoints, Income and Ledger: no session is sent to the login page, a book
// the viewer is not in is 404, a viewer's write is refused, and bad filters answer in place.

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

const CARD = { number: '4242424242424242', exp: '12/34', cvc: '123' };
const cookie = (token: string) => ({ cookie: `tb_session=${token}` });

async function paidBook() {
  const world = await h.world({ scopes: ['payments'] });
  const bank = await h.makeAccount(world.spaceId, { kind: 'bank', name: 'Bank <b>', currency: 'USD' });
  const minted = await h.inject({
    method: 'POST',
    url: '/integration/payment-requests',
    key: world.key.key,
    payload: { account_id: bank.id, amount: '2', resource: 'https://api.example.com/<script>x</script>' },
  });
  await h.inject({ method: 'POST', url: `/pay/${minted.json().token}/card`, payload: CARD });
  const endpoints = await h.inject({
    method: 'GET',
    url: `/app/api/spaces/${world.spaceId}/endpoints`,
    session: world.owner.token,
  });
  const entries = await h.inject({
    method: 'GET',
    url: `/app/api/spaces/${world.spaceId}/ledger/entries`,
    session: world.owner.token,
  });
  const income = await h.inject({
    method: 'GET',
    url: `/app/api/spaces/${world.spaceId}/income`,
    session: world.owner.token,
  });
  const row = income.json().items[0];
  return {
    ...world,
    bank,
    resourceId: endpoints.json().items[0].id as string,
    entryId: entries.json().items[0].id as string,
    paymentsQuery: `ref=${row.ref}&day=${row.day}&currency=${row.currency}`,
  };
}

function pagesOf(book: Awaited<ReturnType<typeof paidBook>>) {
  const base = `/app/books/${book.spaceId}`;
  return [
    `${base}/endpoints`,
    `${base}/income`,
    `${base}/income?ref=${book.resourceId}`,
    `${base}/income/payments?${book.paymentsQuery}`,
    `${base}/ledger`,
    `${base}/ledger?account_id=${book.bank.id}`,
    `${base}/ledger/${book.entryId}`,
  ];
}

describe('Endpoints, Income and Ledger pages', () => {
  it('render for a member, escaping what payers and owners typed', async () => {
    const book = await paidBook();
    for (const url of pagesOf(book)) {
      const res = await h.inject({ method: 'GET', url, headers: cookie(book.owner.token) });
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).not.toContain('<script>x</script>');
      expect(res.headers['content-security-policy']).not.toContain('unsafe-inline');
    }
    const endpoints = await h.inject({
      method: 'GET',
      url: pagesOf(book)[0]!,
      headers: cookie(book.owner.token),
    });
    expect(endpoints.body).toContain('https://api.example.com/&lt;script>x&lt;/script>');
  });

  it('send a visitor without a session to the login page, and answer 404 for a book they are not in', async () => {
    const book = await paidBook();
    const stranger = await h.signup('Stranger');
    for (const url of pagesOf(book)) {
      const anonymous = await h.inject({ method: 'GET', url });
      expect(anonymous.statusCode, url).toBe(303);
      expect(anonymous.headers.location, url).toMatch(/^\/app\/login\?next=/);
      const elsewhere = await h.inject({ method: 'GET', url, headers: cookie(stranger.token) });
      expect(elsewhere.statusCode, url).toBe(404);
    }
    const findable = await h.inject({
      method: 'POST',
      url: `/app/books/${book.spaceId}/endpoints/${book.resourceId}/findable`,
      headers: { ...cookie(stranger.token), 'content-type': 'application/x-www-form-urlencoded' },
      payload: `_csrf=${stranger.csrf}&findable=true`,
    });
    expect(findable.statusCode).toBe(404);
  });

  it('show a viewer no Findable switch and refuse the viewer’s post; the owner’s post switches it', async () => {
    const book = await paidBook();
    const viewer = await h.signup('Viewer');
    await h.addMember(book.owner, book.spaceId, viewer, 'viewer');
    const url = `/app/books/${book.spaceId}/endpoints`;
    const seen = await h.inject({ method: 'GET', url, headers: cookie(viewer.token) });
    expect(seen.statusCode).toBe(200);
    expect(seen.body).not.toContain('/findable');
    const post = (user: { token: string; csrf: string }) =>
      h.inject({
        method: 'POST',
        url: `${url}/${book.resourceId}/findable`,
        headers: { ...cookie(user.token), 'content-type': 'application/x-www-form-urlencoded' },
        payload: `_csrf=${user.csrf}&findable=true`,
      });
    expect((await post(viewer)).statusCode).toBe(403);
    const cards = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${book.spaceId}/endpoints`,
      session: book.owner.token,
    });
    expect(cards.json().items[0].findable).toBe(false);
    const switched = await post(book.owner);
    expect(switched.statusCode).toBe(303);
    expect(switched.headers.location).toBe(url);
    const after = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${book.spaceId}/endpoints`,
      session: book.owner.token,
    });
    expect(after.json().items[0].findable).toBe(true);
    // Without the CSRF token the post is refused and nothing changes.
    const forged = await h.inject({
      method: 'POST',
      url: `${url}/${book.resourceId}/findable`,
      headers: { ...cookie(book.owner.token), 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'findable=false',
    });
    expect(forged.statusCode).toBe(403);
  });

  it('answer a bad ledger filter or cursor with the sentence in place, not a server error', async () => {
    const book = await paidBook();
    const base = `/app/books/${book.spaceId}/ledger`;
    const backwards = await h.inject({
      method: 'GET',
      url: `${base}?from=2026-12-01&to=2026-11-01`,
      headers: cookie(book.owner.token),
    });
    expect(backwards.statusCode).toBe(422);
    expect(backwards.body).toContain('from must not be after to.');
    const garbled = await h.inject({
      method: 'GET',
      url: `${base}?from=yesterday`,
      headers: cookie(book.owner.token),
    });
    expect(garbled.statusCode).toBe(422);
    const cursor = await h.inject({
      method: 'GET',
      url: `${base}?cursor=bm9wZQ`,
      headers: cookie(book.owner.token),
    });
    expect(cursor.statusCode).toBe(422);
    expect(cursor.body).toContain('This cursor is not one this list gave out.');
  });

  it('Push sources: batches for owners and admins, a notice for others; no session, another book and a viewer’s undo are refused', async () => {
    const world = await h.world({ scopes: ['transactions'], push_source: 'erp' });
    const pushed = await h.inject({
      method: 'POST',
      url: '/integration/transactions',
      key: world.key.key,
      payload: {
        rows: [
          {
            external_id: 'x-1',
            account_key: 'bank',
            currency: 'EUR',
            occurred_on: '2026-03-15',
            amount: '5',
          },
        ],
      },
    });
    const batchId = pushed.json().batch_id as string;
    expect(batchId).toMatch(/^[0-9a-f-]{36}$/);
    const url = `/app/books/${world.spaceId}/push`;
    const owner = await h.inject({ method: 'GET', url, headers: cookie(world.owner.token) });
    expect(owner.statusCode).toBe(200);
    expect(owner.body).toContain(`/push/${batchId}/undo`);
    const viewer = await h.signup('Viewer');
    await h.addMember(world.owner, world.spaceId, viewer, 'viewer');
    const seen = await h.inject({ method: 'GET', url, headers: cookie(viewer.token) });
    expect(seen.statusCode).toBe(200);
    expect(seen.body).toContain('Only owners and admins see pushed batches.');
    expect(seen.body).not.toContain('/undo');
    expect(seen.body).not.toContain('/push/close');
    const stranger = await h.signup('Stranger');
    expect((await h.inject({ method: 'GET', url })).statusCode).toBe(303);
    expect((await h.inject({ method: 'GET', url, headers: cookie(stranger.token) })).statusCode).toBe(404);
    const undo = (user: { token: string; csrf: string }) =>
      h.inject({
        method: 'POST',
        url: `${url}/${batchId}/undo`,
        headers: { ...cookie(user.token), 'content-type': 'application/x-www-form-urlencoded' },
        payload: `_csrf=${user.csrf}`,
      });
    expect((await undo(viewer)).statusCode).toBe(403);
    expect((await undo(stranger)).statusCode).toBe(404);
    const batches = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${world.spaceId}/push-batches`,
      session: world.owner.token,
    });
    expect(batches.json().items[0].status).toBe('booked');
    const done = await undo(world.owner);
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe(`${url}?reversed=1`);
    // Undoing again answers the refusal in place.
    const again = await undo(world.owner);
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('This batch was undone already.');
  });

  it('Connections: owners manage, others see a notice; no session, another book and a viewer’s writes are refused', async () => {
    const world = await h.world();
    const created = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${world.spaceId}/subscriptions`,
      session: world.owner.token,
      payload: { url: 'https://hooks.example.com/tollbook', events: [] },
    });
    expect(created.statusCode).toBe(201);
    const sid = created.json().id as string;
    const base = `/app/books/${world.spaceId}/subscriptions`;
    const owner = await h.inject({ method: 'GET', url: base, headers: cookie(world.owner.token) });
    expect(owner.statusCode).toBe(200);
    expect(owner.body).toContain('All events');
    expect(owner.body).not.toContain(created.json().secret);
    const journal = await h.inject({
      method: 'GET',
      url: `${base}/${sid}`,
      headers: cookie(world.owner.token),
    });
    expect(journal.statusCode).toBe(200);
    expect(journal.body).toContain('No deliveries in the last 30 days');
    const viewer = await h.signup('Viewer');
    await h.addMember(world.owner, world.spaceId, viewer, 'viewer');
    const seen = await h.inject({ method: 'GET', url: base, headers: cookie(viewer.token) });
    expect(seen.body).toContain('Only owners and admins manage event subscriptions.');
    expect(seen.body).not.toContain('/rotate');
    expect(
      (await h.inject({ method: 'GET', url: `${base}/${sid}`, headers: cookie(viewer.token) })).statusCode,
    ).toBe(403);
    const stranger = await h.signup('Stranger');
    for (const url of [base, `${base}/${sid}`]) {
      expect((await h.inject({ method: 'GET', url })).statusCode).toBe(303);
      expect((await h.inject({ method: 'GET', url, headers: cookie(stranger.token) })).statusCode).toBe(404);
    }
    const post = (user: { token: string; csrf: string }, action: string) =>
      h.inject({
        method: 'POST',
        url: `${base}/${sid}/${action}`,
        headers: { ...cookie(user.token), 'content-type': 'application/x-www-form-urlencoded' },
        payload: `_csrf=${user.csrf}`,
      });
    for (const action of ['rotate', 'test', 'resume', 'delete']) {
      expect((await post(viewer, action)).statusCode, action).toBe(403);
      expect((await post(stranger, action)).statusCode, action).toBe(404);
    }
    const rotated = await post(world.owner, 'rotate');
    expect(rotated.statusCode).toBe(200);
    expect(rotated.body).toMatch(/whsec_[A-Za-z0-9]+/);
    expect(rotated.body).toContain('you will not see this again');
    const refused = await h.inject({
      method: 'POST',
      url: base,
      headers: { ...cookie(world.owner.token), 'content-type': 'application/x-www-form-urlencoded' },
      payload: `_csrf=${world.owner.csrf}&url=${encodeURIComponent('https://internal.example.com/x')}`,
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('The webhook address is refused');
    const deleted = await post(world.owner, 'delete');
    expect(deleted.statusCode).toBe(303);
    expect(deleted.headers.location).toBe(`${base}?done=deleted`);
  });
});
