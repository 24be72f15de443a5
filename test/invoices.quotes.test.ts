import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.ts';

// An accepted quote becomes an invoice.

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

describe('accepting a quote', () => {
  it('makes a draft invoice with the same client, lines and totals, named by the quote', async () => {
    const { key } = await h.world({ scopes: ['invoices'] });
    const account = await h.makeAccount(key.spaceId);
    const call = (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) =>
      h.inject({ method, url, key: key.key, payload });
    const quote = (
      await call('POST', '/integration/invoices', {
        kind: 'quote',
        account_id: account.id,
        client_name: 'Acme GmbH',
        client_email: 'ap@acme.test',
        due_on: '2027-06-30',
        line_items: [
          { description: 'Design', unit_price: '120', quantity: '3', tax_kind: 'standard', tax_rate: '20' },
          { description: 'Hosting', unit_price: '9.99', quantity: '12' },
        ],
      })
    ).json();
    await call('POST', `/integration/invoices/${quote.id}/send`, { via: 'none' });
    const accepted = await call('POST', `/integration/invoices/${quote.id}/accept`, {});
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json()).toMatchObject({ status: 'quote_accepted', invoice_id: expect.any(String) });
    const invoice = (await call('GET', `/integration/invoices/${accepted.json().invoice_id}`)).json();
    expect(invoice).toMatchObject({
      kind: 'invoice',
      status: 'draft',
      client_name: 'Acme GmbH',
      client_email: 'ap@acme.test',
      total: quote.total,
      subtotal: quote.subtotal,
      tax_total: quote.tax_total,
      line_items: quote.line_items,
      invoice_id: null,
    });
    expect(invoice.number).not.toBe(quote.number);
    expect(invoice.url).not.toBe(quote.url);
    // The invoice goes on like any other: it can be sent and paid.
    expect(
      (await call('POST', `/integration/invoices/${invoice.id}/send`, { via: 'none' })).json().status,
    ).toBe('sent');
  });

  it('makes nothing when the quote is declined', async () => {
    const { key } = await h.world({ scopes: ['invoices'] });
    const account = await h.makeAccount(key.spaceId);
    const quote = (
      await h.inject({
        method: 'POST',
        url: '/integration/invoices',
        key: key.key,
        payload: {
          kind: 'quote',
          account_id: account.id,
          client_name: 'B',
          due_on: '2027-06-30',
          line_items: [{ description: 'x', unit_price: '1' }],
        },
      })
    ).json();
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${quote.id}/send`,
      key: key.key,
      payload: { via: 'none' },
    });
    const declined = await h.inject({
      method: 'POST',
      url: `/integration/invoices/${quote.id}/decline`,
      key: key.key,
      payload: {},
    });
    expect(declined.json()).toMatchObject({ status: 'quote_declined', invoice_id: null });
  });
});
