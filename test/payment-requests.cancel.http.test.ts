import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLedger } from '../src/features/ledger/index.ts';
import type { Queryable } from '../src/platform/db/database.ts';
import { describeAuthContract } from './auth-contract.ts';
import { createHarness, type Harness, type User } from './harness.ts';
import { untilBlockedBehind } from './support/lock-waits.ts';

// Cancelling a payment request: it lapses now (the spec's only road to cancelled), a cancelled one
// is answered again, a paid one is 409 conflict; the app's button calls the same service; and a
// cancel racing a payment on PostgreSQL ends with exactly one of them, the one that took the
// request's row lock first.

describeAuthContract({
  method: 'POST',
  url: '/integration/payment-requests/none/cancel',
  scope: 'payments',
  okStatus: 200,
  setup: async (h, key) => {
    const bank = await h.makeAccount(key.spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
    const minted = await h.inject({
      method: 'POST',
      url: '/integration/payment-requests',
      key: key.key,
      payload: { account_id: bank.id, amount: 3 },
    });
    return { url: `/integration/payment-requests/${minted.json().token}/cancel` };
  },
});

const postgres = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== '';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

const cookie = (token: string) => ({ cookie: `tb_session=${token}` });

async function bookWithRequest(amount = '12.5') {
  const world = await h.world({ scopes: ['payments'] });
  const bank = await h.makeAccount(world.spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
  const minted = await h.inject({
    method: 'POST',
    url: '/integration/payment-requests',
    key: world.key.key,
    payload: { account_id: bank.id, amount, memo: 'Consulting' },
  });
  expect(minted.statusCode, minted.body).toBe(201);
  const request = minted.json() as { id: string; token: string; url: string; expires_at: string };
  return { ...world, request };
}

type Book = Awaited<ReturnType<typeof bookWithRequest>>;

const cancel = (book: Book, token = book.request.token) =>
  h.inject({ method: 'POST', url: `/integration/payment-requests/${token}/cancel`, key: book.key.key });
const cancelInApp = (book: Book, user: User = book.owner) =>
  h.inject({
    method: 'POST',
    url: `/app/api/spaces/${book.spaceId}/payment-requests/${book.request.token}/cancel`,
    session: user.token,
  });
const markPaid = (book: Book, amount: string, reference: string) =>
  h.inject({
    method: 'POST',
    url: `/app/api/spaces/${book.spaceId}/payment-requests/${book.request.token}/mark-paid`,
    session: book.owner.token,
    payload: { amount, reference },
  });
const entriesOf = async (spaceId: string) =>
  (await h.db.selectFrom('ledger_entries').select('id').where('space_id', '=', spaceId).execute()).length;

describe('POST /integration/payment-requests/{token}/cancel', () => {
  it('makes an active request lapse now: it reads cancelled and takes no more payments', async () => {
    const book = await bookWithRequest();
    const before = Date.now();
    const res = await cancel(book);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      token: book.request.token,
      status: 'cancelled',
      amount_received: '0.00000000',
    });
    expect(new Date(body.expires_at).getTime()).toBeLessThanOrEqual(Date.now());
    expect(new Date(body.expires_at).getTime()).toBeGreaterThanOrEqual(before - 1000);
    const stored = await h.db
      .selectFrom('payment_requests')
      .select(['status', 'cancelled_at'])
      .where('id', '=', book.request.id)
      .executeTakeFirstOrThrow();
    expect(stored.status).toBe('cancelled');
    expect(stored.cancelled_at).not.toBeNull();
    const paid = await markPaid(book, '12.5', 'REF-late');
    expect(paid.statusCode).toBe(409);
    expect(paid.json().error).toBe('request_not_payable');
    expect(await entriesOf(book.spaceId)).toBe(0);
  });

  it('answers a cancelled request again, unchanged', async () => {
    const book = await bookWithRequest();
    const first = (await cancel(book)).json();
    const again = await cancel(book);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first);
  });

  it('refuses a paid request with 409 conflict and the error body, and leaves it paid', async () => {
    const book = await bookWithRequest();
    expect((await markPaid(book, '12.5', 'REF-1')).statusCode).toBe(200);
    const res = await cancel(book);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      error: 'conflict',
      detail: 'This payment request is paid; a paid request cannot be cancelled.',
      details: { status: 'paid' },
    });
    const read = await h.inject({
      method: 'GET',
      url: `/integration/payment-requests/${book.request.token}`,
      key: book.key.key,
    });
    expect(read.json().status).toBe('paid');
  });

  it('does not find a request of another book (404), and changes nothing there', async () => {
    const book = await bookWithRequest();
    const other = await bookWithRequest();
    const res = await cancel(other, book.request.token);
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toBe('not_found');
    const read = await h.inject({
      method: 'GET',
      url: `/integration/payment-requests/${book.request.token}`,
      key: book.key.key,
    });
    expect(read.json().status).toBe('active');
  });
});

describe('the app: Cancel on an active request', () => {
  it('lets owners and admins cancel through the app API; a viewer is refused', async () => {
    const book = await bookWithRequest();
    const viewer = await h.signup('Viewer');
    await h.addMember(book.owner, book.spaceId, viewer, 'viewer');
    const refused = await cancelInApp(book, viewer);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error).toBe('forbidden');
    const res = await cancelInApp(book);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().status).toBe('cancelled');
  });

  it('shows the button on the request page, and the form post cancels and lists it under Cancelled', async () => {
    const book = await bookWithRequest();
    const page = `/app/books/${book.spaceId}/payment-requests/${book.request.token}/mark-paid`;
    const shown = await h.inject({ method: 'GET', url: page, headers: cookie(book.owner.token) });
    expect(shown.statusCode).toBe(200);
    const action = `/app/books/${book.spaceId}/payment-requests/${book.request.token}/cancel`;
    expect(shown.body).toContain(`action="${action}"`);
    expect(shown.body).toContain('Cancel the request');
    const posted = await h.inject({
      method: 'POST',
      url: action,
      headers: { ...cookie(book.owner.token), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: book.owner.csrf }).toString(),
    });
    expect(posted.statusCode, posted.body).toBe(303);
    expect(posted.headers.location).toBe(`/app/books/${book.spaceId}/payment-requests?status=cancelled`);
    const list = await h.inject({
      method: 'GET',
      url: posted.headers.location as string,
      headers: cookie(book.owner.token),
    });
    expect(list.body).toContain('Consulting');
    const after = await h.inject({ method: 'GET', url: page, headers: cookie(book.owner.token) });
    expect(after.body).not.toContain('Cancel the request');
    expect(after.body).toContain('This payment request is cancelled');
  });

  it('answers a refused cancel of a paid request in place (409), with the sentence', async () => {
    const book = await bookWithRequest();
    expect((await markPaid(book, '12.5', 'REF-1')).statusCode).toBe(200);
    const posted = await h.inject({
      method: 'POST',
      url: `/app/books/${book.spaceId}/payment-requests/${book.request.token}/cancel`,
      headers: { ...cookie(book.owner.token), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: book.owner.csrf }).toString(),
    });
    expect(posted.statusCode).toBe(409);
    expect(posted.body).toContain('a paid request cannot be cancelled');
  });
});

/**
 * Holds the request's row lock in another session, starts `first` and waits until it is queued
 * behind the lock, then starts `second` and waits until it is queued too, then lets go: the row
 * lock is granted in that order, so `first` decides and `second` sees what it did.
 */
async function race<A, B>(book: Book, first: () => Promise<A>, second: () => Promise<B>) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked!: (tx: Queryable) => void;
  const holding = new Promise<Queryable>((resolve) => {
    locked = resolve;
  });
  const holder = h.db.transaction().execute(async (tx) => {
    await sql`SELECT id FROM payment_requests WHERE id = ${book.request.id} FOR UPDATE`.execute(tx);
    locked(tx);
    await held;
  });
  const tx = await holding;
  const a = first();
  await untilBlockedBehind(tx, 1);
  const b = second();
  await untilBlockedBehind(tx, 2);
  release();
  await holder;
  return [await a, await b] as const;
}

describe('cancel against a payment arriving at the same moment (PostgreSQL)', () => {
  it.skipIf(!postgres)(
    'the cancel that takes the lock first wins: the payment is refused and nothing is booked',
    async () => {
      const book = await bookWithRequest();
      const [cancelled, paid] = await race(
        book,
        () => cancel(book),
        () => markPaid(book, '12.5', 'REF-race'),
      );
      expect(cancelled.statusCode, cancelled.body).toBe(200);
      expect(cancelled.json().status).toBe('cancelled');
      expect(paid.statusCode).toBe(409);
      expect(paid.json().error).toBe('request_not_payable');
      expect(await entriesOf(book.spaceId)).toBe(0);
      expect((await checkLedger(h.db, book.spaceId)).sound).toBe(true);
    },
  );

  it.skipIf(!postgres)(
    'the payment that takes the lock first wins: it is booked and the cancel is 409 conflict',
    async () => {
      const book = await bookWithRequest();
      const [paid, cancelled] = await race(
        book,
        () => markPaid(book, '12.5', 'REF-race'),
        () => cancel(book),
      );
      expect(paid.statusCode, paid.body).toBe(200);
      expect(paid.json().status).toBe('paid');
      expect(cancelled.statusCode).toBe(409);
      expect(cancelled.json().error).toBe('conflict');
      expect(await entriesOf(book.spaceId)).toBe(1);
      expect((await checkLedger(h.db, book.spaceId)).sound).toBe(true);
    },
  );
});
