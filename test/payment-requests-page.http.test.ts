import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';

// The mark-paid page of a payment request (the list links to it rather than carrying a form per
// row): the same service call as the app API, its errors in place, and the usual auth contract.

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

const cookie = (token: string) => ({ cookie: `tb_session=${token}` });

async function bookWithRequest() {
  const world = await h.world({ scopes: ['payments'] });
  const bank = await h.makeAccount(world.spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
  const minted = await h.inject({
    method: 'POST',
    url: '/integration/payment-requests',
    key: world.key.key,
    payload: { account_id: bank.id, amount: '12.5', memo: 'Consulting <b>May</b>' },
  });
  const token = minted.json().token as string;
  return { ...world, token, page: `/app/books/${world.spaceId}/payment-requests/${token}/mark-paid` };
}

function post(user: User, url: string, fields: Record<string, string>) {
  return h.inject({
    method: 'POST',
    url,
    headers: { ...cookie(user.token), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: user.csrf, ...fields }).toString(),
  });
}

describe('Payment requests: the mark-paid page', () => {
  it('is linked from the list (no form per row) and shows the request with its form', async () => {
    const book = await bookWithRequest();
    const list = await h.inject({
      method: 'GET',
      url: `/app/books/${book.spaceId}/payment-requests`,
      headers: cookie(book.owner.token),
    });
    expect(list.body).toContain(`href="${book.page}"`);
    expect(list.body).not.toContain('Bank reference');
    const page = await h.inject({ method: 'GET', url: book.page, headers: cookie(book.owner.token) });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Consulting &lt;b>May&lt;/b>');
    expect(page.body).toContain('12.50 USD');
    expect(page.body).toContain('<label for="field-amount">Amount received (USD)</label>');
    expect(page.body).toContain('<label for="field-reference">Bank reference</label>');
  });

  it('answers a bad amount beside its field, then records a good one and the list shows it paid', async () => {
    const book = await bookWithRequest();
    const refused = await post(book.owner, book.page, { amount: 'twelve', reference: 'REF-1' });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toMatch(/id="field-amount-error">[^<]+</);
    expect(refused.body).toContain('value="REF-1"');
    const done = await post(book.owner, book.page, { amount: '12.5', reference: 'REF-1' });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe(`/app/books/${book.spaceId}/payment-requests`);
    const read = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${book.spaceId}/payment-requests/${book.token}`,
      session: book.owner.token,
    });
    expect(read.json()).toMatchObject({ status: 'paid', amount_received: '12.50000000' });
    const again = await h.inject({ method: 'GET', url: book.page, headers: cookie(book.owner.token) });
    expect(again.body).toContain('it takes no more payments');
    expect(again.body).not.toContain('Bank reference');
    const twice = await post(book.owner, book.page, { amount: '1', reference: 'REF-2' });
    expect(twice.statusCode).toBe(409);
  });

  it('sends no session to log in, hides other books (404), and gives a viewer no form and refuses their post', async () => {
    const book = await bookWithRequest();
    const other = await bookWithRequest();
    const anonymous = await h.inject({ method: 'GET', url: book.page });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toContain('/app/login');
    const stranger = await h.signup('Stranger');
    expect(
      (await h.inject({ method: 'GET', url: book.page, headers: cookie(stranger.token) })).statusCode,
    ).toBe(404);
    expect((await post(stranger, book.page, { amount: '1', reference: 'x' })).statusCode).toBe(404);
    // A token of another book, under this book's path, does not exist here.
    const crossed = `/app/books/${book.spaceId}/payment-requests/${other.token}/mark-paid`;
    expect(
      (await h.inject({ method: 'GET', url: crossed, headers: cookie(book.owner.token) })).statusCode,
    ).toBe(404);
    expect((await post(book.owner, crossed, { amount: '1', reference: 'x' })).statusCode).toBe(404);
    const viewer = await h.signup('Viewer');
    await h.addMember(book.owner, book.spaceId, viewer, 'viewer');
    const seen = await h.inject({ method: 'GET', url: book.page, headers: cookie(viewer.token) });
    expect(seen.statusCode).toBe(200);
    expect(seen.body).not.toContain('Record the payment');
    expect((await post(viewer, book.page, { amount: '1', reference: 'x' })).statusCode).toBe(403);
    const api = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${book.spaceId}/payment-requests/${other.token}`,
      session: book.owner.token,
    });
    expect(api.statusCode).toBe(404);
  });
});
