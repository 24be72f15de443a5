import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import { checkLedger } from '../src/features/ledger/index.ts';
import { describeAuthContract } from './auth-contract.ts';
import { createHarness, type Harness, type Key } from './harness.ts';

const draftBody = (accountId: string, extra: Record<string, unknown> = {}) => ({
  account_id: accountId,
  client_name: 'Acme GmbH',
  due_on: '2026-12-31',
  line_items: [
    { description: 'Consulting', unit_price: '100', quantity: '2', tax_kind: 'standard', tax_rate: '20' },
  ],
  ...extra,
});

async function mirrored(h: Harness, key: Key, extra: Record<string, unknown> = {}) {
  const account = await h.makeAccount(key.spaceId);
  const res = await h.inject({
    method: 'POST',
    url: '/integration/invoices',
    key: key.key,
    payload: draftBody(account.id, extra),
  });
  if (res.statusCode !== 201) throw new Error(res.body);
  return res.json() as { id: string; number: string };
}

async function sentInvoice(h: Harness, key: Key) {
  const invoice = await mirrored(h, key);
  await h.inject({
    method: 'POST',
    url: `/integration/invoices/${invoice.id}/send`,
    key: key.key,
    payload: { via: 'none' },
  });
  return invoice;
}

describeAuthContract({
  method: 'POST',
  url: '/integration/invoices',
  scope: 'invoices',
  okStatus: 201,
  setup: async (h, key) => ({ payload: draftBody((await h.makeAccount(key.spaceId)).id) }),
});
describeAuthContract({
  method: 'GET',
  url: '/integration/invoices/none',
  scope: 'invoices',
  okStatus: 200,
  setup: async (h, key) => ({ url: `/integration/invoices/${(await mirrored(h, key)).id}` }),
});
for (const [action, payload, make] of [
  ['seller', { name: 'Seller Ltd' }, mirrored],
  ['client', { name: 'New client' }, mirrored],
  ['send', { via: 'none' }, mirrored],
  ['payments', { amount: '1' }, sentInvoice],
  ['void', {}, mirrored],
  ['remind', {}, sentInvoice],
] as const) {
  describeAuthContract({
    method: 'POST',
    url: `/integration/invoices/none/${action}`,
    scope: 'invoices',
    okStatus: 200,
    setup: async (h, key) => ({
      url: `/integration/invoices/${(await make(h, key)).id}/${action}`,
      payload: { ...payload },
    }),
  });
}

const clock = new ManualClock(new Date('2026-06-15T10:00:00Z'));
let h: Harness;
let key: Key;
let account: { id: string };
beforeAll(async () => {
  h = await createHarness({ clock });
  ({ key } = await h.world({ scopes: ['invoices'] }));
  account = await h.makeAccount(key.spaceId, { currency: 'EUR' });
});
afterAll(() => h.close());

const create = (payload: Record<string, unknown>, k: Key = key, headers: Record<string, string> = {}) =>
  h.inject({ method: 'POST', url: '/integration/invoices', key: k.key, payload, headers });
const act = (id: string, action: string, payload: Record<string, unknown> = {}, k: Key = key) =>
  h.inject({ method: 'POST', url: `/integration/invoices/${id}/${action}`, key: k.key, payload });
const read = (id: string, k: Key = key) =>
  h.inject({ method: 'GET', url: `/integration/invoices/${id}`, key: k.key });

async function draft(extra: Record<string, unknown> = {}) {
  const res = await create(draftBody(account.id, extra));
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}
async function sent(extra: Record<string, unknown> = {}) {
  const invoice = await draft(extra);
  const res = await act(invoice.id, 'send', { via: 'none' });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
const events = (spaceId: string, event: string) =>
  h.db
    .selectFrom('outbox_events')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('event', '=', event)
    .execute();

describe('POST /integration/invoices: success', () => {
  it('mirrors a draft with every InvoiceOut field, its defaults and computed totals', async () => {
    const body = await draft({ number: `N-${Date.now()}` });
    expect(body).toMatchObject({
      client_name: 'Acme GmbH',
      client_email: '',
      currency: 'EUR',
      issued_on: '2026-06-15',
      due_on: '2026-12-31',
      notes: '',
      status: 'draft',
      kind: 'invoice',
      account_id: account.id,
      contact_id: null,
      project_id: null,
      corrects_invoice_id: null,
      auto_remind: true,
      card_payments_enabled: true,
      card_payments_live: false,
      delivered_in_app: false,
      prices_include_tax: false,
      client_address: '',
      client_country: '',
      client_country_code: '',
      client_phone: '',
      client_reg_number: '',
      client_tax_id: '',
      purchase_order: '',
      tax_authority_number: '',
      tax_label: '',
      line_step: '',
      seller_name: '',
      seller_email: '',
      seller_website: '',
      subtotal: '200.00000000',
      tax_total: '40.00000000',
      total: '240.00000000',
      paid_amount: '0.00000000',
      credited_amount: '0.00000000',
      tax_breakdown: [{ tax_kind: 'standard', tax_rate: '20', net: '200.00000000', tax: '40.00000000' }],
      contested_at: null,
      payer_marked_paid_at: null,
      payment_withdrawn_at: null,
      reminders_paused_at: null,
      contested_reason: '',
      last_paid_on: null,
      promised_on: null,
      payments: [],
    });
    expect(body.line_items).toEqual([
      {
        description: 'Consulting',
        unit_price: '100',
        quantity: '2',
        tax_kind: 'standard',
        tax_rate: '20',
        unit: '',
        amount: '200.00000000',
      },
    ]);
    expect(body.token).toMatch(/^inv_/);
    expect(body.url).toBe(`http://localhost:8080/i/${body.token}`);
  });

  it('generates INV-000001-style numbers per space, skipping ones the seller typed in', async () => {
    const { key: fresh } = await h.world({ scopes: ['invoices'] });
    const wallet = await h.makeAccount(fresh.spaceId);
    const first = (await create(draftBody(wallet.id), fresh)).json();
    expect(first.number).toBe('INV-000001');
    expect((await create(draftBody(wallet.id, { number: 'INV-000002' }), fresh)).statusCode).toBe(201);
    expect((await create(draftBody(wallet.id), fresh)).json().number).toBe('INV-000003');
  });

  it('takes every optional field, inclusive prices and a seller, and uppercases the currency', async () => {
    const body = await draft({
      currency: 'jpy',
      issued_on: '2026-06-01',
      prices_include_tax: true,
      line_items: [
        { description: 'Box', unit_price: '1100', tax_kind: 'standard', tax_rate: '10', unit: 'pc' },
      ],
      client_email: 'billing@acme.example',
      client_address: 'Main St 1',
      client_country: 'Germany',
      client_country_code: 'de',
      client_phone: '+49 1',
      client_reg_number: 'HRB 1',
      client_tax_id: 'DE123',
      notes: 'Thanks',
      purchase_order: 'PO-9',
      tax_authority_number: 'TA-1',
      tax_exempt_reason: null,
      tax_zero_reason: 'export',
      project_id: '00000000-0000-4000-8000-000000000001',
      seller: { name: 'Seller Ltd', email: 'ar@seller.example', website: 'https://seller.example' },
    });
    expect(body).toMatchObject({
      currency: 'JPY',
      issued_on: '2026-06-01',
      prices_include_tax: true,
      subtotal: '1000.00000000',
      tax_total: '100.00000000',
      total: '1100.00000000',
      client_country_code: 'DE',
      tax_zero_reason: 'export',
      seller_name: 'Seller Ltd',
      seller_website: 'https://seller.example',
      project_id: '00000000-0000-4000-8000-000000000001',
    });
  });

  it('saves the client as a contact and later updates that contact', async () => {
    const first = await draft({ save_contact: true, client_email: 'a@acme.example' });
    expect(first.contact_id).toMatch(/^[0-9a-f-]{36}$/);
    const second = await draft({ save_contact: true, contact_id: first.contact_id, client_name: 'Acme AG' });
    expect(second.contact_id).toBe(first.contact_id);
    const contact = await h.db
      .selectFrom('contacts')
      .selectAll()
      .where('id', '=', first.contact_id)
      .executeTakeFirstOrThrow();
    expect(contact).toMatchObject({ name: 'Acme AG', saved_to_book: true });
  });

  it('replays the first answer for a repeated Idempotency-Key', async () => {
    const payload = draftBody(account.id);
    const one = await create(payload, key, { 'idempotency-key': `inv-${Date.now()}` });
    const two = await create(payload, key, {
      'idempotency-key': (one.headers['idempotency-key'] as string) ?? `inv-${Date.now()}`,
    });
    expect(one.statusCode).toBe(201);
    expect([201, 422]).toContain(two.statusCode);
    const idem = `inv-fixed-${Date.now()}`;
    const a = await create(payload, key, { 'idempotency-key': idem });
    const b = await create(payload, key, { 'idempotency-key': idem });
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(b.json().id).toBe(a.json().id);
  });
});

describe('POST /integration/invoices: refusals', () => {
  it('refuses a number already used by a live invoice with 409 and the existing id; a void one frees it', async () => {
    const number = `DUP-${Date.now()}`;
    const first = await draft({ number });
    const again = await create(draftBody(account.id, { number }));
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error: 'invoice_number_taken', details: { existing_id: first.id } });
    expect((await act(first.id, 'void')).statusCode).toBe(200);
    expect((await create(draftBody(account.id, { number }))).statusCode).toBe(201);
  });

  it('refuses an account of another space with 422 account_not_found', async () => {
    const { key: other } = await h.world({ scopes: ['invoices'] });
    const foreign = await h.makeAccount(other.spaceId);
    const res = await create(draftBody(foreign.id));
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toBe('account_not_found');
  });

  it.each([
    ['missing client_name', { client_name: undefined }, 'client_name'],
    ['empty client_name', { client_name: '' }, 'client_name'],
    ['client_name over 200', { client_name: 'x'.repeat(201) }, 'client_name'],
    ['no line items', { line_items: [] }, 'line_items'],
    [
      '201 line items',
      { line_items: Array.from({ length: 201 }, () => ({ description: 'a', unit_price: '1' })) },
      'line_items',
    ],
    ['bad due_on', { due_on: '2026-13-01' }, 'due_on'],
    ['bad email', { client_email: 'not-an-email' }, 'client_email'],
    ['country code of 3', { client_country_code: 'DEU' }, 'client_country_code'],
    ['notes over 4000', { notes: 'x'.repeat(4001) }, 'notes'],
    ['number over 40', { number: 'x'.repeat(41) }, 'number'],
    ['empty number', { number: '' }, 'number'],
    [
      'unknown tax kind',
      { line_items: [{ description: 'a', unit_price: '1', tax_kind: 'luxury' }] },
      'line_items',
    ],
    [
      'description over 300',
      { line_items: [{ description: 'x'.repeat(301), unit_price: '1' }] },
      'line_items',
    ],
    ['bad account id', { account_id: 'nope' }, 'account_id'],
  ])('answers 422 for %s', async (_name, extra, field) => {
    const res = await create({ ...draftBody(account.id), ...extra });
    expect(res.statusCode, res.body).toBe(422);
    expect(JSON.stringify(res.json().detail)).toContain(field);
  });

  it.each([
    ['exponent price', { unit_price: '1e3' }, 'unit_price'],
    ['nine decimals', { unit_price: '1.000000001' }, 'unit_price'],
    ['zero quantity', { unit_price: '1', quantity: '0' }, 'quantity'],
    ['rate over 100', { unit_price: '1', tax_rate: '120' }, 'tax_rate'],
    ['signs only', { unit_price: '-.' }, 'unit_price'],
  ])('refuses a line with %s, naming the field', async (_name, line, field) => {
    const res = await create(draftBody(account.id, { line_items: [{ description: 'a', ...line }] }));
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().error).toBe('invalid_request');
    expect(res.json().details.problems[0].loc).toEqual(['body', 'line_items', 0, field]);
  });
});

describe('GET /integration/invoices/{id}', () => {
  it('reads the invoice as the space has it, and 404s for another space or an unknown id', async () => {
    const invoice = await draft();
    const res = await read(invoice.id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(invoice);
    const { key: other } = await h.world({ scopes: ['invoices'] });
    expect((await read(invoice.id, other)).statusCode).toBe(404);
    expect((await read('00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
    expect((await read('not-a-uuid')).statusCode).toBe(422);
  });
});

describe('seller and client', () => {
  it('replaces the seller and the client requisites and answers the updated invoice', async () => {
    const invoice = await draft();
    const seller = await act(invoice.id, 'seller', {
      name: 'Seller Ltd',
      tax_id: 'GB1',
      website: 'https://s.example',
    });
    expect(seller.statusCode, seller.body).toBe(200);
    expect(seller.json()).toMatchObject({
      seller_name: 'Seller Ltd',
      seller_tax_id: 'GB1',
      seller_website: 'https://s.example',
    });
    const client = await act(invoice.id, 'client', {
      name: 'Other Co',
      email: 'x@other.example',
      country: 'France',
    });
    expect(client.json()).toMatchObject({
      client_name: 'Other Co',
      client_email: 'x@other.example',
      client_country: 'France',
    });
    expect((await act(invoice.id, 'client', { email: 'bad' })).statusCode).toBe(422);
    expect((await act(invoice.id, 'client', { name: 'x'.repeat(201) })).statusCode).toBe(422);
    expect((await act(invoice.id, 'client', {})).json().error).toBe('invalid_request');
  });

  it('refuses edits of a void invoice with invoice_state', async () => {
    const invoice = await draft();
    await act(invoice.id, 'void');
    const res = await act(invoice.id, 'seller', { name: 'Late' });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toBe('invoice_state');
  });
});

describe('send', () => {
  it('marks a draft sent with via none and records the delivery; sending again keeps it sent', async () => {
    const invoice = await draft();
    const res = await act(invoice.id, 'send', { via: 'none' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().status).toBe('sent');
    expect((await act(invoice.id, 'send', { via: 'none' })).json().status).toBe('sent');
    const rows = await h.db
      .selectFrom('invoice_deliveries')
      .selectAll()
      .where('invoice_id', '=', invoice.id)
      .execute();
    expect(rows.map((row) => row.via)).toEqual([['none'], ['none']]);
  });

  it('says mail is not configured and the chat bot is not enabled, and leaves the draft a draft', async () => {
    const invoice = await draft();
    const email = await act(invoice.id, 'send', {});
    expect(email.statusCode).toBe(422);
    expect(email.json()).toMatchObject({
      error: 'delivery_unavailable',
      details: { reason: 'mail_not_configured' },
    });
    const chat = await act(invoice.id, 'send', { via: 'chat' });
    expect(chat.statusCode).toBe(503);
    expect(chat.json().error).toBe('chat_unavailable');
    expect((await read(invoice.id)).json().status).toBe('draft');
    expect((await act(invoice.id, 'send', { via: 'fax' })).statusCode).toBe(422);
  });

  it('refuses to send a paid or void invoice', async () => {
    const invoice = await sent();
    await act(invoice.id, 'payments', { amount: '240' });
    expect((await act(invoice.id, 'send', { via: 'none' })).json().error).toBe('invoice_state');
    await act(invoice.id, 'void');
    expect((await act(invoice.id, 'send', { via: 'none' })).json().error).toBe('invoice_state');
  });
});

describe('payments', () => {
  it('moves sent → partial → paid, books each payment and sets last_paid_on', async () => {
    const invoice = await sent();
    const one = await act(invoice.id, 'payments', {
      amount: '100',
      occurred_on: '2026-06-10',
      note: 'first',
    });
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json()).toMatchObject({
      status: 'partial',
      paid_amount: '100.00000000',
      last_paid_on: '2026-06-10',
    });
    const two = await act(invoice.id, 'payments', { amount: 140 });
    expect(two.json()).toMatchObject({
      status: 'paid',
      paid_amount: '240.00000000',
      last_paid_on: '2026-06-15',
    });
    expect(two.json().payments.map((p: { amount: string }) => p.amount)).toEqual([
      '100.00000000',
      '140.00000000',
    ]);
    const entries = await h.db
      .selectFrom('ledger_entries')
      .selectAll()
      .where('space_id', '=', key.spaceId)
      .where('cause_type', '=', 'invoice_payment')
      .execute();
    expect(entries.length).toBeGreaterThanOrEqual(2);
    expect((await checkLedger(h.db, key.spaceId)).sound).toBe(true);
  });

  it('fires invoice.paid once on the key channel and once on the book channel, with the wire spelling', async () => {
    const { key: own } = await h.world({ scopes: ['invoices'] });
    const wallet = await h.makeAccount(own.spaceId);
    const invoice = (await create(draftBody(wallet.id, { number: 'P-1' }), own)).json();
    await act(invoice.id, 'send', { via: 'none' }, own);
    await act(invoice.id, 'payments', { amount: '40' }, own);
    await act(invoice.id, 'payments', { amount: '200' }, own);
    const paid = await events(own.spaceId, 'invoice.paid');
    expect(paid).toHaveLength(2);
    const keyEvent = paid.find((row) => row.channel === 'key')!;
    expect(keyEvent.key_id).toBe(own.id);
    expect(keyEvent.payload).toEqual({
      invoice_id: invoice.id,
      number: 'P-1',
      currency: 'USD',
      total: '240',
      total_paid: '240',
      via: 'manual',
    });
    const bookEvent = paid.find((row) => row.channel === 'book')!;
    expect(bookEvent.payload).toEqual({
      invoice_id: invoice.id,
      number: 'P-1',
      amount: '240.00000000',
      currency: 'USD',
    });
    expect(await events(own.spaceId, 'money.in')).toHaveLength(2);
  });

  it('closes once under concurrent payments that each reach the total: one wins, invoice.paid once', async () => {
    const { key: own } = await h.world({ scopes: ['invoices'] });
    const wallet = await h.makeAccount(own.spaceId);
    const invoice = (await create(draftBody(wallet.id), own)).json();
    await act(invoice.id, 'send', { via: 'none' }, own);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => act(invoice.id, 'payments', { amount: '240' }, own)),
    );
    expect(answers.filter((res) => res.statusCode === 200)).toHaveLength(1);
    for (const res of answers.filter((r) => r.statusCode !== 200))
      expect(res.json().error).toBe('invoice_state');
    expect(await events(own.spaceId, 'invoice.paid')).toHaveLength(2);
    expect((await read(invoice.id, own)).json()).toMatchObject({
      status: 'paid',
      paid_amount: '240.00000000',
    });
  });

  it('closes once when concurrent halves race to the total', async () => {
    const { key: own } = await h.world({ scopes: ['invoices'] });
    const wallet = await h.makeAccount(own.spaceId);
    const invoice = (await create(draftBody(wallet.id), own)).json();
    await act(invoice.id, 'send', { via: 'none' }, own);
    const answers = await Promise.all(
      Array.from({ length: 3 }, () => act(invoice.id, 'payments', { amount: '120' }, own)),
    );
    expect(answers.map((res) => res.statusCode).sort()).toEqual([200, 200, 422]);
    expect(await events(own.spaceId, 'invoice.paid')).toHaveLength(2);
  });

  it('refuses an overpayment with 422 naming the open amount, and books nothing', async () => {
    const invoice = await sent();
    const res = await act(invoice.id, 'payments', { amount: '240.01' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      error: 'amount_not_accepted',
      details: { reason: 'overpayment', open: '240.00000000' },
    });
    expect((await read(invoice.id)).json().payments).toEqual([]);
  });

  it('refuses payments against draft, paid and void invoices with invoice_state', async () => {
    const drafted = await draft();
    expect((await act(drafted.id, 'payments', { amount: '1' })).json().error).toBe('invoice_state');
    const paid = await sent();
    await act(paid.id, 'payments', { amount: '240' });
    expect((await act(paid.id, 'payments', { amount: '1' })).json().error).toBe('invoice_state');
    const voided = await sent();
    await act(voided.id, 'void');
    expect((await act(voided.id, 'payments', { amount: '1' })).json().error).toBe('invoice_state');
  });

  it.each([
    ['zero', { amount: '0' }],
    ['negative', { amount: '-5' }],
    ['exponent', { amount: '1e2' }],
    ['note over 500', { amount: '1', note: 'x'.repeat(501) }],
    ['bad date', { amount: '1', occurred_on: 'yesterday' }],
    ['missing amount', {}],
  ])('answers 422 for a %s payment', async (_name, payload) => {
    const invoice = await sent();
    expect((await act(invoice.id, 'payments', payload)).statusCode).toBe(422);
  });

  it('refuses a payment into an account of another currency', async () => {
    const invoice = await sent();
    const usd = await h.makeAccount(key.spaceId, { currency: 'USD' });
    const res = await act(invoice.id, 'payments', { amount: '1', account_id: usd.id });
    expect(res.json().error).toBe('currency_mismatch');
  });
});

describe('void and remind', () => {
  it('voids a paid invoice, keeps its payments booked and listed, and answers a repeat unchanged', async () => {
    const invoice = await sent();
    await act(invoice.id, 'payments', { amount: '240' });
    const res = await act(invoice.id, 'void', { reason: 'duplicate' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'void',
      void_reason: 'duplicate',
      paid_amount: '240.00000000',
    });
    expect(res.json().payments).toHaveLength(1);
    expect(res.json().payments[0].entry_id).toMatch(/^[0-9a-f-]{36}$/);
    const again = await act(invoice.id, 'void', { reason: 'other' });
    expect(again.json()).toMatchObject({ status: 'void', void_reason: 'duplicate' });
    expect((await act(invoice.id, 'void', { reason: 'x'.repeat(501) })).statusCode).toBe(422);
  });

  it('voids drafts, sent and partial invoices', async () => {
    const drafted = await draft();
    expect((await act(drafted.id, 'void')).json().status).toBe('void');
    const partial = await sent();
    await act(partial.id, 'payments', { amount: '1' });
    expect((await act(partial.id, 'void')).json().status).toBe('void');
  });

  it('records a reminder for sent and partial invoices only', async () => {
    const invoice = await sent();
    const res = await act(invoice.id, 'remind', { message: 'Kind reminder' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      invoice_id: invoice.id,
      reminded: true,
      via: [],
      at: '2026-06-15T10:00:00.000Z',
    });
    await act(invoice.id, 'payments', { amount: '1' });
    expect((await act(invoice.id, 'remind')).statusCode).toBe(200);
    const rows = await h.db
      .selectFrom('invoice_deliveries')
      .selectAll()
      .where('invoice_id', '=', invoice.id)
      .where('purpose', '=', 'remind')
      .execute();
    expect(rows).toHaveLength(2);
    const drafted = await draft();
    expect((await act(drafted.id, 'remind')).json().error).toBe('invoice_state');
    expect((await act(invoice.id, 'remind', { message: 'x'.repeat(2001) })).statusCode).toBe(422);
  });
});

describe('quotes', () => {
  it('moves quote_draft → quote_sent → quote_accepted, and refuses what a quote cannot do', async () => {
    const quote = await draft({ kind: 'quote' });
    expect(quote).toMatchObject({ kind: 'quote', status: 'quote_draft' });
    expect((await act(quote.id, 'accept')).json()).toMatchObject({
      error: 'invoice_state',
      details: { status: 'quote_draft' },
    });
    expect((await act(quote.id, 'send', { via: 'none' })).json().status).toBe('quote_sent');
    expect((await act(quote.id, 'payments', { amount: '1' })).json().error).toBe('invoice_state');
    expect((await act(quote.id, 'remind')).json().error).toBe('invoice_state');
    const accepted = await act(quote.id, 'accept');
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json().status).toBe('quote_accepted');
    expect((await act(quote.id, 'decline')).json().error).toBe('invoice_state');
    expect((await act(quote.id, 'void')).json().status).toBe('void');
  });

  it('declines a sent quote', async () => {
    const quote = await draft({ kind: 'quote' });
    await act(quote.id, 'send', { via: 'none' });
    expect((await act(quote.id, 'decline')).json().status).toBe('quote_declined');
    expect((await act(quote.id, 'accept')).json().error).toBe('invoice_state');
  });

  it('reads a sent quote past its due date as expired and refuses to accept it', async () => {
    const quote = await draft({ kind: 'quote', due_on: '2026-06-01' });
    expect((await act(quote.id, 'send', { via: 'none' })).json().status).toBe('quote_expired');
    expect((await read(quote.id)).json().status).toBe('quote_expired');
    expect((await act(quote.id, 'accept')).json()).toMatchObject({
      error: 'invoice_state',
      details: { status: 'quote_expired' },
    });
  });

  it('refuses accept and decline on invoices', async () => {
    const invoice = await sent();
    expect((await act(invoice.id, 'accept')).json().error).toBe('invoice_state');
    expect((await act(invoice.id, 'decline')).json().error).toBe('invoice_state');
  });
});

describe('credit notes', () => {
  const credit = (invoiceId: string, amount: string, extra: Record<string, unknown> = {}) =>
    create(
      draftBody(account.id, {
        kind: 'credit_note',
        corrects_invoice_id: invoiceId,
        line_items: [{ description: 'Credit', unit_price: amount }],
        ...extra,
      }),
    );

  it('is issued at once and adds to the corrected invoice, which then closes at the lower amount', async () => {
    const { key: own } = await h.world({ scopes: ['invoices'] });
    const wallet = await h.makeAccount(own.spaceId);
    const invoice = (await create(draftBody(wallet.id), own)).json();
    await act(invoice.id, 'send', { via: 'none' }, own);
    const note = await create(
      draftBody(wallet.id, {
        kind: 'credit_note',
        corrects_invoice_id: invoice.id,
        line_items: [{ description: 'Credit', unit_price: '40' }],
      }),
      own,
    );
    expect(note.statusCode, note.body).toBe(201);
    expect(note.json()).toMatchObject({
      kind: 'credit_note',
      status: 'issued',
      corrects_invoice_id: invoice.id,
      total: '40.00000000',
    });
    expect((await read(invoice.id, own)).json().credited_amount).toBe('40.00000000');
    expect((await act(note.json().id, 'payments', { amount: '1' }, own)).json().error).toBe('invoice_state');
    expect((await act(invoice.id, 'payments', { amount: '200.01' }, own)).json().details.open).toBe(
      '200.00000000',
    );
    const paid = await act(invoice.id, 'payments', { amount: '200' }, own);
    expect(paid.json()).toMatchObject({ status: 'paid', paid_amount: '200.00000000' });
    const keyEvent = (await events(own.spaceId, 'invoice.paid')).find((row) => row.channel === 'key')!;
    expect(keyEvent.payload).toMatchObject({ total: '240', total_paid: '200' });
  });

  it('gives its amount back when voided, and refuses a credit larger than the open amount', async () => {
    const invoice = await sent();
    const note = (await credit(invoice.id, '100')).json();
    expect((await credit(invoice.id, '140.01')).json()).toMatchObject({
      error: 'amount_not_accepted',
      details: { open: '140.00000000' },
    });
    expect((await act(note.id, 'void')).json().status).toBe('void');
    expect((await read(invoice.id)).json().credited_amount).toBe('0.00000000');
    expect((await credit(invoice.id, '240')).statusCode).toBe(201);
  });

  it('refuses a correction on anything but a credit note, of a void invoice, or of another space', async () => {
    const invoice = await sent();
    expect((await create(draftBody(account.id, { corrects_invoice_id: invoice.id }))).json().error).toBe(
      'invalid_request',
    );
    const { key: other } = await h.world({ scopes: ['invoices'] });
    const foreign = await mirrored(h, other);
    expect((await credit(foreign.id, '1')).json().error).toBe('invalid_request');
    await act(invoice.id, 'void');
    expect((await credit(invoice.id, '1')).json().error).toBe('invoice_state');
    expect((await credit(invoice.id, '1', { currency: 'USD' })).statusCode).toBe(422);
  });
});
