import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';

// Invoices, quotes and credit notes in the owner's app: the app API (/app/api/spaces/{id}/invoices…)
// that scripts use, and the pages (/app/books/{id}/invoices…) that call the same functions.

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const UUID_A = '00000000-0000-4000-8000-000000000001';

type Book = { owner: User; spaceId: string; accountId: string };

async function book(): Promise<Book> {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner);
  const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
  return { owner, spaceId, accountId: account.id };
}

function api(user: User, method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) {
  return h.inject({ method, url, session: user.token, ...(payload ? { payload } : {}) });
}

async function create(b: Book, extra: Record<string, unknown> = {}) {
  const res = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices`, {
    account_id: b.accountId,
    client_name: 'Acme GmbH',
    due_on: '2099-06-30',
    line_items: [{ description: 'Design', unit_price: '100', quantity: '2' }],
    ...extra,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; number: string; status: string; total: string; kind: string };
}

describe('the app API of invoices', () => {
  it('creates an invoice, sends it, records payments until it is paid, and reads it back with its payments', async () => {
    const b = await book();
    const invoice = await create(b);
    expect(invoice).toMatchObject({ status: 'draft', kind: 'invoice', total: '200.00000000' });
    const base = `/app/api/spaces/${b.spaceId}/invoices/${invoice.id}`;
    expect((await api(b.owner, 'POST', `${base}/send`, { via: 'none' })).json().status).toBe('sent');
    const partial = await api(b.owner, 'POST', `${base}/payments`, { amount: '50', note: 'first' });
    expect(partial.json()).toMatchObject({ status: 'partial', paid_amount: '50.00000000' });
    const reminded = await api(b.owner, 'POST', `${base}/remind`, { message: 'Please pay' });
    expect(reminded.json()).toMatchObject({ invoice_id: invoice.id, reminded: true, via: [] });
    const paid = await api(b.owner, 'POST', `${base}/payments`, { amount: '150' });
    expect(paid.json().status).toBe('paid');
    const read = await api(b.owner, 'GET', base);
    expect(read.statusCode).toBe(200);
    expect(read.json().payments.map((p: { amount: string }) => p.amount)).toEqual([
      '50.00000000',
      '150.00000000',
    ]);
    const again = await api(b.owner, 'POST', `${base}/payments`, { amount: '1' });
    expect(again.statusCode).toBe(422);
    expect(again.json().error).toBe('invoice_state');
  });

  it('answers the PDF of a document', async () => {
    const b = await book();
    const invoice = await create(b);
    const res = await api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/invoices/${invoice.id}/pdf`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="invoice-${invoice.number}.pdf"`);
    expect(res.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('accepts a sent quote into a draft invoice, declines another, and refuses to accept a draft', async () => {
    const b = await book();
    const quote = await create(b, { kind: 'quote' });
    expect(quote.status).toBe('quote_draft');
    const base = `/app/api/spaces/${b.spaceId}/invoices`;
    const early = await api(b.owner, 'POST', `${base}/${quote.id}/accept`, {});
    expect(early.statusCode).toBe(422);
    expect(early.json().error).toBe('invoice_state');
    await api(b.owner, 'POST', `${base}/${quote.id}/send`, { via: 'none' });
    const accepted = await api(b.owner, 'POST', `${base}/${quote.id}/accept`, {});
    expect(accepted.json()).toMatchObject({ status: 'quote_accepted', invoice_id: expect.any(String) });
    const made = await api(b.owner, 'GET', `${base}/${accepted.json().invoice_id}`);
    expect(made.json()).toMatchObject({ kind: 'invoice', status: 'draft', total: quote.total });
    const other = await create(b, { kind: 'quote' });
    await api(b.owner, 'POST', `${base}/${other.id}/send`, { via: 'none' });
    expect((await api(b.owner, 'POST', `${base}/${other.id}/decline`, {})).json().status).toBe(
      'quote_declined',
    );
  });

  it('issues a credit note against an invoice, which lowers what is open; voiding it gives it back', async () => {
    const b = await book();
    const invoice = await create(b);
    const note = await create(b, {
      kind: 'credit_note',
      corrects_invoice_id: invoice.id,
      line_items: [{ description: 'Discount', unit_price: '30' }],
    });
    expect(note.status).toBe('issued');
    const base = `/app/api/spaces/${b.spaceId}/invoices`;
    expect((await api(b.owner, 'GET', `${base}/${invoice.id}`)).json().credited_amount).toBe('30.00000000');
    const voided = await api(b.owner, 'POST', `${base}/${note.id}/void`, { reason: 'Issued by mistake' });
    expect(voided.json()).toMatchObject({ status: 'void', void_reason: 'Issued by mistake' });
    expect((await api(b.owner, 'GET', `${base}/${invoice.id}`)).json().credited_amount).toBe('0.00000000');
  });

  it('lists newest first, 50 a page, filtered by kind and status, and refuses a cursor it did not give out', async () => {
    const b = await book();
    const made: string[] = [];
    for (let index = 0; index < 52; index += 1) {
      made.push((await create(b, { kind: index % 2 === 0 ? 'invoice' : 'quote', number: `N-${index}` })).id);
    }
    const base = `/app/api/spaces/${b.spaceId}/invoices`;
    const first = (await api(b.owner, 'GET', base)).json();
    expect(first.items).toHaveLength(50);
    const second = (await api(b.owner, 'GET', `${base}?cursor=${first.next_cursor}`)).json();
    expect(second.items).toHaveLength(2);
    expect(second.next_cursor).toBeNull();
    // Newest first: (created_at, id) descending across both pages, every document once.
    const listed = [...first.items, ...second.items] as { id: string; created_at: string }[];
    const order = [...listed].sort((x, y) =>
      x.created_at === y.created_at ? (x.id < y.id ? 1 : -1) : x.created_at < y.created_at ? 1 : -1,
    );
    expect(listed.map((item) => item.id)).toEqual(order.map((item) => item.id));
    expect(new Set(listed.map((item) => item.id))).toEqual(new Set(made));
    expect(listed[0]!.created_at >= listed[51]!.created_at).toBe(true);
    const quotes = (await api(b.owner, 'GET', `${base}?kind=quote`)).json();
    expect(quotes.items).toHaveLength(26);
    expect(quotes.items.every((item: { kind: string }) => item.kind === 'quote')).toBe(true);
    await api(b.owner, 'POST', `${base}/${made[51]}/send`, { via: 'none' });
    const sent = (await api(b.owner, 'GET', `${base}?kind=quote&status=quote_sent`)).json();
    expect(sent.items.map((item: { id: string }) => item.id)).toEqual([made[51]]);
    const drafts = (await api(b.owner, 'GET', `${base}?kind=quote&status=quote_draft`)).json();
    expect(drafts.items).toHaveLength(25);
    const bad = await api(b.owner, 'GET', `${base}?cursor=not-a-cursor`);
    expect(bad.statusCode).toBe(422);
    const badStatus = await api(b.owner, 'GET', `${base}?status=lost`);
    expect(badStatus.statusCode).toBe(422);
    expect(badStatus.json().detail[0].loc).toEqual(['query', 'status']);
  });

  it('lists a sent quote past its due date as expired, and filters it so', async () => {
    const b = await book();
    const quote = await create(b, { kind: 'quote', due_on: '2020-01-31' });
    const base = `/app/api/spaces/${b.spaceId}/invoices`;
    await api(b.owner, 'POST', `${base}/${quote.id}/send`, { via: 'none' });
    const expired = (await api(b.owner, 'GET', `${base}?status=quote_expired`)).json();
    expect(expired.items.map((item: { id: string; status: string }) => [item.id, item.status])).toEqual([
      [quote.id, 'quote_expired'],
    ]);
    expect((await api(b.owner, 'GET', `${base}?status=quote_sent`)).json().items).toEqual([]);
  });

  it('lets a viewer read but not write, and answers 404 for another book’s invoice', async () => {
    const b = await book();
    const invoice = await create(b);
    const viewer = await h.signup('Viewer');
    await h.addMember(b.owner, b.spaceId, viewer, 'viewer');
    const base = `/app/api/spaces/${b.spaceId}/invoices`;
    expect((await api(viewer, 'GET', `${base}/${invoice.id}`)).statusCode).toBe(200);
    expect((await api(viewer, 'GET', base)).json().items).toHaveLength(1);
    for (const [path, body] of [
      [
        '',
        {
          account_id: b.accountId,
          client_name: 'X',
          due_on: '2099-01-01',
          line_items: [{ description: 'a', unit_price: '1' }],
        },
      ],
      [`/${invoice.id}/send`, { via: 'none' }],
      [`/${invoice.id}/void`, {}],
      [`/${invoice.id}/remind`, {}],
      [`/${invoice.id}/accept`, {}],
    ] as const) {
      const res = await api(viewer, 'POST', `${base}${path}`, body);
      expect(res.statusCode, path).toBe(403);
      expect(res.json().error, path).toBe('forbidden');
    }
    expect((await api(b.owner, 'GET', `${base}/${invoice.id}`)).json().status).toBe('draft');
    const stranger = await book();
    expect((await api(stranger.owner, 'GET', `${base}/${invoice.id}`)).statusCode).toBe(404);
    expect((await api(stranger.owner, 'GET', base)).statusCode).toBe(404);
    const theirs = `/app/api/spaces/${stranger.spaceId}/invoices/${invoice.id}`;
    expect((await api(stranger.owner, 'GET', theirs)).statusCode).toBe(404);
    expect((await api(stranger.owner, 'POST', `${theirs}/void`, {})).statusCode).toBe(404);
    expect((await api(b.owner, 'GET', `${base}/${invoice.id}`)).json().status).toBe('draft');
  });

  it('refuses a body the schema refuses with the validation shape, and an unknown account with 422', async () => {
    const b = await book();
    const base = `/app/api/spaces/${b.spaceId}/invoices`;
    const res = await api(b.owner, 'POST', base, {
      account_id: b.accountId,
      client_name: 'X',
      line_items: [],
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail.map((item: { loc: unknown[] }) => item.loc.join('.'))).toEqual(
      expect.arrayContaining(['body.due_on', 'body.line_items']),
    );
    const unknown = await api(b.owner, 'POST', base, {
      account_id: UUID_A,
      client_name: 'X',
      due_on: '2099-01-01',
      line_items: [{ description: 'a', unit_price: '1' }],
    });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().error).toBe('account_not_found');
    const invoice = await create(b);
    await api(b.owner, 'POST', `${base}/${invoice.id}/send`, { via: 'none' });
    const amount = await api(b.owner, 'POST', `${base}/${invoice.id}/payments`, { amount: '1e3' });
    expect(amount.statusCode).toBe(422);
    expect(amount.json().detail[0].loc).toEqual(['body', 'amount']);
  });

  it('takes concurrent payments that together overpay one at a time: one closes it, the other is refused', async () => {
    const b = await book();
    const invoice = await create(b);
    const base = `/app/api/spaces/${b.spaceId}/invoices/${invoice.id}`;
    await api(b.owner, 'POST', `${base}/send`, { via: 'none' });
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => api(b.owner, 'POST', `${base}/payments`, { amount: '120' })),
    );
    const codes = answers.map((res) => res.statusCode).sort();
    expect(codes).toEqual([200, 422, 422, 422]);
    expect(answers.filter((res) => res.statusCode === 422).map((res) => res.json().error)).toEqual([
      'amount_not_accepted',
      'amount_not_accepted',
      'amount_not_accepted',
    ]);
    const read = (await api(b.owner, 'GET', base)).json();
    expect(read).toMatchObject({ status: 'partial', paid_amount: '120.00000000' });
    expect(read.payments).toHaveLength(1);
    const closing = await Promise.all(
      Array.from({ length: 3 }, () => api(b.owner, 'POST', `${base}/payments`, { amount: '80' })),
    );
    expect(closing.map((res) => res.statusCode).sort()).toEqual([200, 422, 422]);
    const events = await h.db
      .selectFrom('outbox_events')
      .select(['event'])
      .where('space_id', '=', b.spaceId)
      .where('event', '=', 'invoice.paid')
      .execute();
    expect(events).toHaveLength(1);
  });
});
