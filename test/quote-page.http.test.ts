import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';

// The quote's public page (/i/{token}): the client types a name and accepts or declines. Who and
// when are recorded; an accepted quote becomes a draft invoice, each naming the other's number.
// Accepting again changes nothing; a declined or expired quote cannot be accepted (409).

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

type Book = { owner: User; spaceId: string; accountId: string };

async function book(): Promise<Book> {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner);
  const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Bank', currency: 'EUR' });
  return { owner, spaceId, accountId: account.id };
}

const api = (user: User, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  h.inject({ method, url, session: user.token, payload: payload as Record<string, unknown> | undefined });

async function quote(b: Book, extra: Record<string, unknown> = {}, send = true) {
  const created = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices`, {
    kind: 'quote',
    account_id: b.accountId,
    client_name: 'Acme GmbH',
    due_on: '2099-06-30',
    line_items: [{ description: 'Website <b>redesign</b>', unit_price: '1500' }],
    ...extra,
  });
  expect(created.statusCode, created.body).toBe(201);
  const body = created.json();
  if (send)
    await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices/${body.id}/send`, { via: 'none' });
  return body as { id: string; number: string; token: string };
}

const answer = (token: string, decision: 'accept' | 'decline', name?: string) =>
  h.inject({
    method: 'POST',
    url: `/i/${token}/${decision}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(name === undefined ? {} : { name }).toString(),
  });

const read = (b: Book, id: string) => api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/invoices/${id}`);

describe("the quote's public page", () => {
  it('is not found while the quote is a draft, and shows a sent quote with its answer form', async () => {
    const b = await book();
    const draft = await quote(b, {}, false);
    expect((await h.inject({ method: 'GET', url: `/i/${draft.token}` })).statusCode).toBe(404);
    expect((await answer(draft.token, 'accept', 'Jane')).statusCode).toBe(404);
    const sent = await quote(b);
    const page = await h.inject({ method: 'GET', url: `/i/${sent.token}` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`Quote ${sent.number}`);
    expect(page.body).toMatch(/Website &lt;b(&gt;|>)redesign/);
    expect(page.body).not.toContain('<b>redesign');
    expect(page.body).toContain(`action="/i/${sent.token}/accept"`);
    expect(page.body).toContain(`formaction="/i/${sent.token}/decline"`);
    expect(page.headers['cache-control']).toBe('no-store');
  });

  it('records who accepted and when, makes one draft invoice, and shows each number on the other page', async () => {
    const b = await book();
    const sent = await quote(b);
    const accepted = await answer(sent.token, 'accept', '  Jane Buyer  ');
    expect(accepted.statusCode).toBe(303);
    expect(accepted.headers.location).toBe(`/i/${sent.token}`);
    const record = (await read(b, sent.id)).json();
    expect(record).toMatchObject({ status: 'quote_accepted', quote_decided_by: 'Jane Buyer' });
    expect(Date.parse(record.quote_decided_at)).toBeGreaterThan(Date.now() - 60_000);
    const invoice = (await read(b, record.invoice_id)).json();
    expect(invoice).toMatchObject({ kind: 'invoice', status: 'draft', total: '1500.00000000' });

    // Accepting again (a second click, a reload that posts again) changes nothing.
    expect((await answer(sent.token, 'accept', 'Someone else')).statusCode).toBe(303);
    const again = (await read(b, sent.id)).json();
    expect(again).toMatchObject({ invoice_id: record.invoice_id, quote_decided_by: 'Jane Buyer' });
    const invoices = await api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/invoices?kind=invoice`);
    expect(invoices.json().items).toHaveLength(1);

    const page = await h.inject({ method: 'GET', url: `/i/${sent.token}` });
    expect(page.body).toContain('Accepted by Jane Buyer on');
    expect(page.body).toContain(`Invoice ${invoice.number} follows.`);
    expect(page.body).not.toContain('id="quote-form"');

    const cookie = { cookie: `tb_session=${b.owner.token}` };
    const quoteInApp = await h.inject({
      method: 'GET',
      url: `/app/books/${b.spaceId}/invoices/${sent.id}`,
      headers: cookie,
    });
    expect(quoteInApp.body).toMatch(new RegExp(`data-field="became"><a href="[^"]+">${invoice.number}</a>`));
    expect(quoteInApp.body).toContain('by Jane Buyer');
    const invoiceInApp = await h.inject({
      method: 'GET',
      url: `/app/books/${b.spaceId}/invoices/${invoice.id}`,
      headers: cookie,
    });
    expect(invoiceInApp.body).toMatch(
      new RegExp(`data-field="from-quote"><a href="[^"]+">${sent.number}</a>`),
    );
    // The invoice's public page exists once it is sent, and names the quote too.
    expect((await h.inject({ method: 'GET', url: `/i/${invoice.token}` })).statusCode).toBe(404);
    await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices/${invoice.id}/send`, { via: 'none' });
    const invoicePage = await h.inject({ method: 'GET', url: `/i/${invoice.token}` });
    expect(invoicePage.body).toContain(`From quote ${sent.number}`);
  });

  it('records a decline; a declined quote cannot be accepted (409) and declining again changes nothing', async () => {
    const b = await book();
    const sent = await quote(b);
    expect((await answer(sent.token, 'decline', 'Jane Buyer')).statusCode).toBe(303);
    const declined = (await read(b, sent.id)).json();
    expect(declined).toMatchObject({
      status: 'quote_declined',
      quote_decided_by: 'Jane Buyer',
      invoice_id: null,
    });
    const refused = await answer(sent.token, 'accept', 'Jane Buyer');
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('This quote is declined; it can no longer be accepted.');
    expect((await answer(sent.token, 'decline', 'Other')).statusCode).toBe(303);
    expect((await read(b, sent.id)).json()).toMatchObject({
      status: 'quote_declined',
      quote_decided_by: 'Jane Buyer',
      quote_decided_at: declined.quote_decided_at,
    });
    // An accepted quote cannot be declined either.
    const other = await quote(b);
    await answer(other.token, 'accept', 'Jane');
    expect((await answer(other.token, 'decline', 'Jane')).statusCode).toBe(409);
  });

  it('refuses to accept an expired quote (409) and says so on the page', async () => {
    const b = await book();
    const sent = await quote(b, { due_on: '2020-01-31' });
    const page = await h.inject({ method: 'GET', url: `/i/${sent.token}` });
    expect(page.body).toContain('it can no longer be accepted');
    const refused = await answer(sent.token, 'accept', 'Jane');
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('This quote has expired');
    expect((await read(b, sent.id)).json()).toMatchObject({ status: 'quote_expired', invoice_id: null });
  });

  it('asks for a name (422) and keeps the quote open', async () => {
    const b = await book();
    const sent = await quote(b);
    for (const name of [undefined, '   ', 'x'.repeat(201)]) {
      const refused = await answer(sent.token, 'accept', name);
      expect(refused.statusCode).toBe(422);
      expect(refused.body).toContain('Type your name');
    }
    expect((await read(b, sent.id)).json().status).toBe('quote_sent');
  });

  it('answers an unknown or garbled token with the not-found page', async () => {
    expect((await answer(`inv_${'A'.repeat(43)}`, 'accept', 'Jane')).statusCode).toBe(404);
    expect((await answer('garbled', 'accept', 'Jane')).statusCode).toBe(404);
  });
});
