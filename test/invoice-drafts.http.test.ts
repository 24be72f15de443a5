import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';

// A draft changes until it is sent: PATCH /app/api/spaces/{id}/invoices/{invoice_id} and the
// invoice page's edit form. The totals are computed again; a sent document refuses.

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

const api = (user: User, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
  h.inject({ method, url, session: user.token, payload: payload as Record<string, unknown> | undefined });

async function draft(b: Book, extra: Record<string, unknown> = {}) {
  const res = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices`, {
    account_id: b.accountId,
    client_name: 'Acme GmbH',
    client_email: 'ap@acme.test',
    due_on: '2099-06-30',
    notes: 'First version',
    line_items: [
      { description: 'Design', unit_price: '100', quantity: '2', tax_kind: 'standard', tax_rate: '20' },
    ],
    ...extra,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

const patchUrl = (b: Book, id: string) => `/app/api/spaces/${b.spaceId}/invoices/${id}`;

describe('PATCH a draft', () => {
  it('changes client, lines, dates and notes, computes the totals again and keeps what it was not given', async () => {
    const b = await book();
    const invoice = await draft(b);
    expect(invoice.total).toBe('240.00000000');
    const res = await api(b.owner, 'PATCH', patchUrl(b, invoice.id), {
      client_name: 'Acme Holding AG',
      client_address: 'Bahnhofstrasse 1, Zürich',
      issued_on: '2099-05-01',
      due_on: '2099-07-15',
      notes: 'Second version',
      line_items: [
        { description: 'Design', unit_price: '100', quantity: '3', tax_kind: 'standard', tax_rate: '20' },
        { description: 'Hosting', unit_price: '10.005', quantity: '1', tax_kind: 'reduced', tax_rate: '7' },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    const changed = res.json();
    expect(changed).toMatchObject({
      status: 'draft',
      number: invoice.number,
      client_name: 'Acme Holding AG',
      client_email: 'ap@acme.test',
      client_address: 'Bahnhofstrasse 1, Zürich',
      issued_on: '2099-05-01',
      due_on: '2099-07-15',
      notes: 'Second version',
      subtotal: '310.01000000',
      tax_total: '60.70000000',
      total: '370.71000000',
    });
    expect(changed.line_items).toHaveLength(2);
    expect(changed.tax_breakdown).toEqual([
      { tax_kind: 'standard', tax_rate: '20', net: '300.00000000', tax: '60.00000000' },
      { tax_kind: 'reduced', tax_rate: '7', net: '10.01000000', tax: '0.70000000' },
    ]);
    // What a read answers is what was stored.
    expect((await api(b.owner, 'GET', patchUrl(b, invoice.id))).json()).toMatchObject({
      total: '370.71000000',
      client_name: 'Acme Holding AG',
    });
  });

  it('computes the totals again when only the tax mode changes', async () => {
    const b = await book();
    const invoice = await draft(b);
    const res = await api(b.owner, 'PATCH', patchUrl(b, invoice.id), { prices_include_tax: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      prices_include_tax: true,
      total: '200.00000000',
      tax_total: '33.33000000',
    });
  });

  it('changes a draft quote too', async () => {
    const b = await book();
    const quote = await draft(b, { kind: 'quote' });
    const res = await api(b.owner, 'PATCH', patchUrl(b, quote.id), { due_on: '2099-12-31' });
    expect(res.json()).toMatchObject({ status: 'quote_draft', due_on: '2099-12-31' });
  });

  it('refuses to change a sent invoice, a sent quote or a credit note, and changes nothing', async () => {
    const b = await book();
    const invoice = await draft(b);
    await api(b.owner, 'POST', `${patchUrl(b, invoice.id)}/send`, { via: 'none' });
    const refused = await api(b.owner, 'PATCH', patchUrl(b, invoice.id), { client_name: 'Someone else' });
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toMatchObject({
      error: 'invoice_state',
      details: { status: 'sent', move: 'revise' },
    });
    expect(refused.json().detail).toMatch(/only a draft can be/);
    expect((await api(b.owner, 'GET', patchUrl(b, invoice.id))).json().client_name).toBe('Acme GmbH');

    const quote = await draft(b, { kind: 'quote' });
    await api(b.owner, 'POST', `${patchUrl(b, quote.id)}/send`, { via: 'none' });
    expect((await api(b.owner, 'PATCH', patchUrl(b, quote.id), { notes: 'x' })).json().error).toBe(
      'invoice_state',
    );

    const credit = await draft(b, { kind: 'credit_note', corrects_invoice_id: invoice.id });
    expect((await api(b.owner, 'PATCH', patchUrl(b, credit.id), { notes: 'x' })).json().error).toBe(
      'invoice_state',
    );
  });

  it('refuses bad lines and bad fields with the validation body, and a contact of another space', async () => {
    const b = await book();
    const invoice = await draft(b);
    const badLine = await api(b.owner, 'PATCH', patchUrl(b, invoice.id), {
      line_items: [{ description: 'x', unit_price: '1e3' }],
    });
    expect(badLine.statusCode).toBe(422);
    expect(badLine.json().details.problems[0].loc).toEqual(['body', 'line_items', 0, 'unit_price']);
    const noLines = await api(b.owner, 'PATCH', patchUrl(b, invoice.id), { line_items: [] });
    expect(noLines.statusCode).toBe(422);
    expect(noLines.json().detail[0].loc).toEqual(['body', 'line_items']);
    const badDate = await api(b.owner, 'PATCH', patchUrl(b, invoice.id), { due_on: '2099-02-30' });
    expect(badDate.statusCode).toBe(422);
    const other = await book();
    const contact = await api(other.owner, 'POST', `/app/api/spaces/${other.spaceId}/contacts`, {
      name: 'Elsewhere',
    });
    const foreign = await api(b.owner, 'PATCH', patchUrl(b, invoice.id), { contact_id: contact.json().id });
    expect(foreign.json()).toMatchObject({ error: 'invalid_request', details: { field: 'contact_id' } });
    expect((await api(b.owner, 'GET', patchUrl(b, invoice.id))).json().total).toBe('240.00000000');
  });

  it('lets owners, admins and members change a draft; refuses a viewer (403) and another book (404)', async () => {
    const b = await book();
    const invoice = await draft(b);
    const viewer = await h.signup('Viewer');
    const member = await h.signup('Member');
    await h.addMember(b.owner, b.spaceId, viewer, 'viewer');
    await h.addMember(b.owner, b.spaceId, member, 'member');
    expect((await api(viewer, 'PATCH', patchUrl(b, invoice.id), { notes: 'v' })).statusCode).toBe(403);
    expect((await api(member, 'PATCH', patchUrl(b, invoice.id), { notes: 'm' })).json().notes).toBe('m');
    const stranger = await h.signup('Stranger');
    expect((await api(stranger, 'PATCH', patchUrl(b, invoice.id), { notes: 's' })).statusCode).toBe(404);
    const otherBook = await book();
    const elsewhere = await draft(otherBook);
    expect((await api(b.owner, 'PATCH', patchUrl(b, elsewhere.id), { notes: 'x' })).statusCode).toBe(404);
  });
});

describe('the edit form', () => {
  const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
  const cookie = (user: User) => `tb_session=${user.token}`;

  it('shows the draft, saves what was typed (a cleared field is cleared) and is gone once sent', async () => {
    const b = await book();
    const invoice = await draft(b);
    const editUrl = `/app/books/${b.spaceId}/invoices/${invoice.id}/edit`;
    const shown = await h.inject({ method: 'GET', url: editUrl, headers: { cookie: cookie(b.owner) } });
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain('value="Acme GmbH"');
    expect(shown.body).toContain('value="2099-06-30"');
    expect(shown.body).toContain('value="Design"');
    const saved = await h.inject({
      method: 'POST',
      url: editUrl,
      headers: { ...FORM, cookie: cookie(b.owner) },
      payload: new URLSearchParams({
        _csrf: b.owner.csrf,
        client_name: 'Initech',
        issued_on: '2099-05-02',
        due_on: '2099-08-01',
        'line_items.0.description': 'Support',
        'line_items.0.quantity': '4',
        'line_items.0.unit_price': '25',
        'line_items.2.description': 'Travel',
        'line_items.2.unit_price': '10',
      }).toString(),
    });
    expect(saved.statusCode, saved.body).toBe(303);
    expect(saved.headers.location).toBe(`/app/books/${b.spaceId}/invoices/${invoice.id}?done=saved`);
    const after = (await api(b.owner, 'GET', patchUrl(b, invoice.id))).json();
    expect(after).toMatchObject({
      client_name: 'Initech',
      client_email: '',
      notes: '',
      issued_on: '2099-05-02',
      due_on: '2099-08-01',
      total: '110.00000000',
      tax_total: '0.00000000',
    });
    expect(after.line_items.map((line: { description: string }) => line.description)).toEqual([
      'Support',
      'Travel',
    ]);

    const refused = await h.inject({
      method: 'POST',
      url: editUrl,
      headers: { ...FORM, cookie: cookie(b.owner) },
      payload: new URLSearchParams({
        _csrf: b.owner.csrf,
        client_name: 'Initech',
        'line_items.0.description': 'Support',
        'line_items.0.unit_price': 'abc',
      }).toString(),
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('unit_price must be a decimal string');
    expect(refused.body).toContain('value="abc"');

    await api(b.owner, 'POST', `${patchUrl(b, invoice.id)}/send`, { via: 'none' });
    const gone = await h.inject({ method: 'GET', url: editUrl, headers: { cookie: cookie(b.owner) } });
    expect(gone.statusCode).toBe(303);
    const detail = await h.inject({
      method: 'GET',
      url: `/app/books/${b.spaceId}/invoices/${invoice.id}`,
      headers: { cookie: cookie(b.owner) },
    });
    expect(detail.body).not.toContain('/edit"');
  });
});

describe('PATCH with fields it does not know', () => {
  it('ignores them, as every body does', async () => {
    const b = await book();
    const invoice = await draft(b);
    const res = await api(b.owner, 'PATCH', patchUrl(b, invoice.id), {
      notes: 'kept',
      status: 'paid',
      total: '1',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ notes: 'kept', status: 'draft', total: '240.00000000' });
  });
});
