import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type Key } from './harness.ts';

// The public invoice page: it shows the invoice and opens a payment request for what is open;
// that request's settlement pays the invoice.

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const CARD = { number: '4242424242424242', exp: '12/34', cvc: '123' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

async function sentInvoice(key: Key) {
  const account = await h.makeAccount(key.spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
  const created = await h.inject({
    method: 'POST',
    url: '/integration/invoices',
    key: key.key,
    payload: {
      account_id: account.id,
      client_name: 'Acme <b>GmbH</b>',
      due_on: '2027-12-31',
      line_items: [
        { description: 'Consulting', unit_price: '100', quantity: '2', tax_kind: 'standard', tax_rate: '20' },
      ],
    },
  });
  const invoice = created.json() as { id: string; url: string; number: string };
  await h.inject({
    method: 'POST',
    url: `/integration/invoices/${invoice.id}/send`,
    key: key.key,
    payload: { via: 'none' },
  });
  return { ...invoice, token: invoice.url.split('/i/')[1]! };
}

const getInvoice = async (key: Key, id: string) =>
  (await h.inject({ method: 'GET', url: `/integration/invoices/${id}`, key: key.key })).json();

describe('GET /i/{token}', () => {
  it('shows the invoice, escaped, with what is open and a pay button; refuses to be framed', async () => {
    const { key } = await h.world({ scopes: ['invoices'] });
    const invoice = await sentInvoice(key);
    const page = await h.inject({ method: 'GET', url: `/i/${invoice.token}` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`Invoice ${invoice.number}`);
    // The client's name is text: its angle brackets are escaped, never a tag.
    expect(page.body).toContain('Acme &lt;b>GmbH&lt;/b>');
    expect(page.body).not.toContain('<b>GmbH');
    expect(page.body).toContain('240.00 USD');
    expect(page.body).toContain('id="pay-invoice"');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect((await h.inject({ method: 'GET', url: '/i/inv_nothing' })).statusCode).toBe(404);
  });
});

describe('POST /i/{token}/pay', () => {
  it('opens a payment request for the open amount; paying it by card pays the invoice, invoice.paid once', async () => {
    const { key } = await h.world({ scopes: ['invoices'] });
    const invoice = await sentInvoice(key);
    // 40 paid by hand first: the page asks for the 200 still open.
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/payments`,
      key: key.key,
      payload: { amount: '40' },
    });
    const opened = await h.inject({
      method: 'POST',
      url: `/i/${invoice.token}/pay`,
      headers: FORM,
      payload: '',
    });
    expect(opened.statusCode, opened.body).toBe(303);
    const payUrl = String(opened.headers.location);
    expect(payUrl).toMatch(/^\/pay\/pr_/);
    // Asking again reuses the same request.
    expect(
      (await h.inject({ method: 'POST', url: `/i/${invoice.token}/pay`, headers: FORM, payload: '' })).headers
        .location,
    ).toBe(payUrl);
    const paid = await h.inject({ method: 'POST', url: `${payUrl}/card`, payload: CARD });
    expect(paid.json()).toMatchObject({
      status: 'paid',
      amount: '200.00000000',
      memo: `Invoice ${invoice.number}`,
    });
    const after = await getInvoice(key, invoice.id);
    expect(after).toMatchObject({ status: 'paid', paid_amount: '240.00000000' });
    expect(
      after.payments.map((payment: { via: string; amount: string }) => [payment.via, payment.amount]),
    ).toEqual([
      ['manual', '40.00000000'],
      ['card', '200.00000000'],
    ]);
    const events = await h.db
      .selectFrom('outbox_events')
      .select(['channel', 'event'])
      .where('space_id', '=', key.spaceId)
      .where('event', '=', 'invoice.paid')
      .execute();
    expect(events.map((event) => event.channel).sort()).toEqual(['book', 'key']);
    // The invoice takes no more: the page says so and offers no button.
    const closed = await h.inject({
      method: 'POST',
      url: `/i/${invoice.token}/pay`,
      headers: FORM,
      payload: '',
    });
    expect(closed.statusCode).toBe(409);
    expect(closed.body).toContain('takes no payment');
    expect(closed.body).not.toContain('id="pay-invoice"');
  });

  it('does not open a request for a draft or void invoice', async () => {
    const { key } = await h.world({ scopes: ['invoices'] });
    const invoice = await sentInvoice(key);
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/void`,
      key: key.key,
      payload: {},
    });
    const res = await h.inject({
      method: 'POST',
      url: `/i/${invoice.token}/pay`,
      headers: FORM,
      payload: '',
    });
    expect(res.statusCode).toBe(409);
  });
});
