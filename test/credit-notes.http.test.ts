import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';

// Credit notes: they take the client (and, from the invoice's page, the lines) of the invoice
// they correct, need no due date, say "Corrects INV-…" on their page and PDF, and take their
// total off what the invoice still asks for, on its page and its public page.

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
const cookie = (user: User) => ({ cookie: `tb_session=${user.token}` });

async function sentInvoice(b: Book) {
  const created = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices`, {
    account_id: b.accountId,
    client_name: 'Acme GmbH',
    client_email: 'ap@acme.test',
    client_address: 'Hauptstrasse 5, Berlin',
    client_tax_id: 'DE123456789',
    due_on: '2099-06-30',
    line_items: [
      { description: 'Design', unit_price: '100', quantity: '2' },
      { description: 'Hosting', unit_price: '50' },
    ],
  });
  expect(created.statusCode, created.body).toBe(201);
  const invoice = created.json();
  await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices/${invoice.id}/send`, { via: 'none' });
  return invoice as { id: string; number: string; token: string; url: string };
}

describe('a credit note', () => {
  it('needs no due date and takes the client of the invoice it corrects for each field left blank', async () => {
    const b = await book();
    const invoice = await sentInvoice(b);
    const res = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices`, {
      kind: 'credit_note',
      corrects_invoice_id: invoice.id,
      account_id: b.accountId,
      client_name: 'Acme GmbH (accounts)',
      issued_on: '2099-05-10',
      line_items: [{ description: 'Hosting not delivered', unit_price: '50' }],
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      kind: 'credit_note',
      status: 'issued',
      number: expect.stringMatching(/^CN-\d{6}$/),
      issued_on: '2099-05-10',
      due_on: '2099-05-10',
      client_name: 'Acme GmbH (accounts)',
      client_email: 'ap@acme.test',
      client_address: 'Hauptstrasse 5, Berlin',
      client_tax_id: 'DE123456789',
      corrects_invoice_id: invoice.id,
      total: '50.00000000',
    });
  });

  it('an invoice or a quote without a due date is refused with the validation body, and nothing is numbered', async () => {
    const b = await book();
    for (const kind of ['invoice', 'quote']) {
      const res = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices`, {
        kind,
        account_id: b.accountId,
        client_name: 'X',
        line_items: [{ description: 'x', unit_price: '1' }],
      });
      expect(res.statusCode).toBe(422);
      expect(res.json().detail.map((item: { loc: string[] }) => item.loc.join('.'))).toEqual(['body.due_on']);
    }
    const numbering = await api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/numbering`);
    expect(numbering.json().invoice.next).toBe('INV-000001');
  });

  it('takes its total off the open amount on the invoice page and its public page; voiding gives it back', async () => {
    const b = await book();
    const invoice = await sentInvoice(b);
    const credit = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices`, {
      kind: 'credit_note',
      corrects_invoice_id: invoice.id,
      account_id: b.accountId,
      client_name: 'Acme GmbH',
      line_items: [{ description: 'Goodwill', unit_price: '30' }],
    });
    const note = credit.json();
    const publicPage = await h.inject({ method: 'GET', url: `/i/${invoice.token}` });
    expect(publicPage.body).toMatch(/id="invoice-open">220[.,]00 EUR</);
    const invoicePage = await h.inject({
      method: 'GET',
      url: `/app/books/${b.spaceId}/invoices/${invoice.id}`,
      headers: cookie(b.owner),
    });
    expect(invoicePage.body).toMatch(/data-field="credited"><span class="money">30\.00/);
    expect(invoicePage.body).toMatch(/data-field="open"><span class="money">220\.00/);
    // A payment of the whole total is now more than is open.
    const over = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices/${invoice.id}/payments`, {
      amount: '250',
    });
    expect(over.json()).toMatchObject({ error: 'amount_not_accepted', details: { open: '220.00000000' } });
    await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices/${note.id}/void`, {});
    const again = await h.inject({ method: 'GET', url: `/i/${invoice.token}` });
    expect(again.body).toMatch(/id="invoice-open">250[.,]00 EUR</);
  });

  it('is prefilled from the invoice on "Create credit note" and says "Corrects INV-…" on its page and PDF', async () => {
    const b = await book();
    const invoice = await sentInvoice(b);
    const invoicePage = await h.inject({
      method: 'GET',
      url: `/app/books/${b.spaceId}/invoices/${invoice.id}`,
      headers: cookie(b.owner),
    });
    const href = `/app/books/${b.spaceId}/invoices/new?kind=credit_note&amp;corrects_invoice_id=${invoice.id}`;
    expect(invoicePage.body).toContain(`href="${href}">Create credit note</a>`);
    const form = await h.inject({ method: 'GET', url: href.replace('&amp;', '&'), headers: cookie(b.owner) });
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('value="Acme GmbH"');
    expect(form.body).toContain('value="ap@acme.test"');
    expect(form.body).toContain('value="Design"');
    expect(form.body).toContain('value="Hosting"');
    expect(form.body).not.toContain('name="due_on"');
    expect(form.body).toMatch(new RegExp(`<option value="${invoice.id}" selected`));

    const created = await h.inject({
      method: 'POST',
      url: `/app/books/${b.spaceId}/invoices`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...cookie(b.owner) },
      payload: new URLSearchParams({
        _csrf: b.owner.csrf,
        kind: 'credit_note',
        account_id: b.accountId,
        corrects_invoice_id: invoice.id,
        client_name: 'Acme GmbH',
        'line_items.0.description': 'Hosting',
        'line_items.0.unit_price': '50',
      }).toString(),
    });
    expect(created.statusCode, created.body).toBe(303);
    const notePath = String(created.headers.location).split('?')[0] ?? '';
    const notePage = await h.inject({ method: 'GET', url: notePath, headers: cookie(b.owner) });
    expect(notePage.body).toMatch(
      new RegExp(`data-field="corrects"><a href="[^"]+${invoice.id}">${invoice.number}</a>`),
    );
    const pdf = await h.inject({ method: 'GET', url: `${notePath}/pdf`, headers: cookie(b.owner) });
    expect(pdf.headers['content-type']).toBe('application/pdf');
    const text = execFileSync('pdftotext', ['-layout', '-', '-'], { input: pdf.rawPayload }).toString();
    expect(text).toMatch(new RegExp(`Corrects\\s+${invoice.number}`));
  });
});
