import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLedger } from '../src/features/ledger/index.ts';
import { createHarness, type Harness, type User } from './harness.ts';

// Client credits an owner can run: grant, take back and refund with a reason, each one balanced
// ledger entry shown in the client's history; never below zero; owners and admins only
// (core/roles.ts canAdminister); the client's page in the app.

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

const cookie = (token: string) => ({ cookie: `tb_session=${token}` });

/** A book whose client `acme` has a credit at zero (opened by a refused charge). */
async function bookWithClient() {
  const world = await h.world({ scopes: ['payments'] });
  const bank = await h.makeAccount(world.spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
  const refused = await h.inject({
    method: 'POST',
    url: '/integration/charges',
    key: world.key.key,
    payload: { client_ref: 'acme', account_id: bank.id, amount: '2' },
  });
  expect(refused.json().paid, refused.body).toBe(false);
  return { ...world, bank };
}

type Book = Awaited<ReturnType<typeof bookWithClient>>;

const adjust = (book: Book, body: Record<string, unknown>, user: User = book.owner) =>
  h.inject({
    method: 'POST',
    url: `/app/api/spaces/${book.spaceId}/client-credits/acme/adjustments`,
    session: user.token,
    payload: body,
  });

async function adjustmentsOf(spaceId: string) {
  return h.db
    .selectFrom('client_credit_adjustments')
    .innerJoin('ledger_entries', 'ledger_entries.id', 'client_credit_adjustments.entry_id')
    .select(['client_credit_adjustments.amount', 'refund', 'reason', 'ledger_entries.origin'])
    .where('client_credit_adjustments.space_id', '=', spaceId)
    .orderBy('client_credit_adjustments.created_at')
    .execute();
}

describe('POST /app/api/spaces/{id}/client-credits/{client_ref}/adjustments', () => {
  it('grants, takes back and refunds, each booked as a balanced entry, and a call spends the granted credit', async () => {
    const book = await bookWithClient();
    const granted = await adjust(book, { amount: '10', reason: 'Welcome credit' });
    expect(granted.statusCode, granted.body).toBe(201);
    expect(granted.json()).toMatchObject({ client_ref: 'acme', balance: '10.00000000' });
    const paid = await h.inject({
      method: 'POST',
      url: '/integration/charges',
      key: book.key.key,
      payload: { client_ref: 'acme', account_id: book.bank.id, amount: '2' },
    });
    expect(paid.json()).toMatchObject({ paid: true, balance_usd: '8.00000000' });
    const refunded = await adjust(book, { amount: '-3', reason: 'Refund asked by mail', refund: true });
    expect(refunded.statusCode, refunded.body).toBe(201);
    expect(refunded.json().balance).toBe('5.00000000');
    const corrected = await adjust(book, { amount: -1.5, reason: 'Duplicate grant' });
    expect(corrected.json().balance).toBe('3.50000000');
    const rows = await adjustmentsOf(book.spaceId);
    expect(rows.map((row) => [String(row.amount), row.refund, row.reason, row.origin])).toEqual([
      ['10.00000000', false, 'Welcome credit', 'manual'],
      ['-3.00000000', true, 'Refund asked by mail', 'manual'],
      ['-1.50000000', false, 'Duplicate grant', 'manual'],
    ]);
    expect((await checkLedger(h.db, book.spaceId)).sound).toBe(true);
  });

  it('refuses to take the credit below zero (422) and books nothing', async () => {
    const book = await bookWithClient();
    await adjust(book, { amount: '4', reason: 'Grant' });
    const refused = await adjust(book, { amount: '-4.01', reason: 'Too much' });
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toMatchObject({ error: 'insufficient_balance', details: { field: 'amount' } });
    const refund = await adjust(book, { amount: '-5', reason: 'Too much', refund: true });
    expect(refund.statusCode).toBe(422);
    expect(await adjustmentsOf(book.spaceId)).toHaveLength(1);
    expect((await checkLedger(h.db, book.spaceId)).sound).toBe(true);
  });

  it('refuses zero, a positive refund and a missing reason (422)', async () => {
    const book = await bookWithClient();
    expect((await adjust(book, { amount: '0', reason: 'Nothing' })).json()).toMatchObject({
      error: 'invalid_request',
      details: { field: 'amount' },
    });
    expect((await adjust(book, { amount: '2', reason: 'Back', refund: true })).statusCode).toBe(422);
    expect((await adjust(book, { amount: '2' })).statusCode).toBe(422);
    expect((await adjust(book, { amount: '2', reason: '' })).statusCode).toBe(422);
    expect(await adjustmentsOf(book.spaceId)).toHaveLength(0);
  });

  it('lets owners and admins adjust; a member or viewer is refused (403) and another book sees 404', async () => {
    const book = await bookWithClient();
    const admin = await h.signup('Admin');
    const member = await h.signup('Member');
    const viewer = await h.signup('Viewer');
    await h.addMember(book.owner, book.spaceId, admin, 'admin');
    await h.addMember(book.owner, book.spaceId, member, 'member');
    await h.addMember(book.owner, book.spaceId, viewer, 'viewer');
    expect((await adjust(book, { amount: '1', reason: 'By admin' }, admin)).statusCode).toBe(201);
    for (const refused of [member, viewer]) {
      const res = await adjust(book, { amount: '1', reason: 'Not allowed' }, refused);
      expect(res.statusCode).toBe(403);
    }
    const stranger = await h.signup('Stranger');
    expect((await adjust(book, { amount: '1', reason: 'Not here' }, stranger)).statusCode).toBe(404);
    const unknown = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${book.spaceId}/client-credits/nobody/adjustments`,
      session: book.owner.token,
      payload: { amount: '1', reason: 'x' },
    });
    expect(unknown.statusCode).toBe(404);
    expect(await adjustmentsOf(book.spaceId)).toHaveLength(1);
  });
});

describe('the client page', () => {
  it('shows the balance, calls, top-ups and adjustments; the form books a refund and shows it', async () => {
    const book = await bookWithClient();
    await adjust(book, { amount: '10', reason: 'Welcome <b>credit</b>' });
    const page = `/app/books/${book.spaceId}/clients/acme`;
    const list = await h.inject({
      method: 'GET',
      url: `/app/books/${book.spaceId}/clients`,
      headers: cookie(book.owner.token),
    });
    expect(list.body).toContain(`href="${page}"`);
    const shown = await h.inject({ method: 'GET', url: page, headers: cookie(book.owner.token) });
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain('10.00 USD');
    expect(shown.body).toContain('Welcome &lt;b>credit&lt;/b>');
    expect(shown.body).toContain('Change the credit');
    const posted = await h.inject({
      method: 'POST',
      url: `${page}/adjustments`,
      headers: { ...cookie(book.owner.token), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        _csrf: book.owner.csrf,
        amount: '-2.5',
        reason: 'Paid back',
        refund: 'true',
      }).toString(),
    });
    expect(posted.statusCode, posted.body).toBe(303);
    const after = await h.inject({ method: 'GET', url: page, headers: cookie(book.owner.token) });
    expect(after.body).toContain('7.50 USD');
    expect(after.body).toContain('Refund');
    expect(after.body).toContain('Paid back');
    const tooMuch = await h.inject({
      method: 'POST',
      url: `${page}/adjustments`,
      headers: { ...cookie(book.owner.token), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: book.owner.csrf, amount: '-100', reason: 'Oops' }).toString(),
    });
    expect(tooMuch.statusCode).toBe(422);
    expect(tooMuch.body).toContain('it cannot go below zero');
  });

  it('shows a viewer the history without the form', async () => {
    const book = await bookWithClient();
    const viewer = await h.signup('Viewer');
    await h.addMember(book.owner, book.spaceId, viewer, 'viewer');
    const shown = await h.inject({
      method: 'GET',
      url: `/app/books/${book.spaceId}/clients/acme`,
      headers: cookie(viewer.token),
    });
    expect(shown.statusCode).toBe(200);
    expect(shown.body).not.toContain('Change the credit');
    expect(shown.body).toContain('No adjustments yet');
  });
});

describe('the public balance page: Top up', () => {
  it('offers Top up and mints a top-up request the way a refused charge does, reusing an open one that covers it', async () => {
    const book = await bookWithClient();
    const credit = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${book.spaceId}/client-credits`,
      session: book.owner.token,
    });
    const balanceUrl = new URL(credit.json().items[0].balance_url as string);
    const page = await h.inject({ method: 'GET', url: balanceUrl.pathname });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`action="${balanceUrl.pathname}/top-up?amount=10"`);
    const topUp = await h.inject({ method: 'POST', url: `${balanceUrl.pathname}/top-up?amount=10` });
    expect(topUp.statusCode, topUp.body).toBe(303);
    const payUrl = topUp.headers.location as string;
    expect(payUrl).toMatch(/^\/pay\/pr_[0-9A-Za-z]{43}$/);
    const token = payUrl.slice(payUrl.lastIndexOf('/') + 1);
    const request = await h.db
      .selectFrom('payment_requests')
      .select(['purpose', 'amount', 'account_id', 'client_credit_id'])
      .where('token', '=', token)
      .executeTakeFirstOrThrow();
    expect(request).toMatchObject({ purpose: 'top_up', account_id: book.bank.id });
    expect(String(request.amount)).toBe('10.00000000');
    // The refused charge's open request asked for 2; a smaller ask now reuses the 10 one.
    const again = await h.inject({ method: 'POST', url: `${balanceUrl.pathname}/top-up?amount=10` });
    expect(again.headers.location).toBe(payUrl);
    expect(
      (await h.inject({ method: 'POST', url: `${balanceUrl.pathname}/top-up?amount=7` })).statusCode,
    ).toBe(422);
    expect((await h.inject({ method: 'POST', url: '/credit/cr_nothing/top-up?amount=10' })).statusCode).toBe(
      404,
    );
  });
});
