import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';

// What a book is owed on its invoices, pre-summed by due day (invoice_owed_days), held to the
// invoices themselves after every kind of write the app makes: sending, payments in part and in
// full, credit notes and their voiding, voiding an invoice, quotes and drafts (which owe nothing),
// and concurrent payments on invoices that fall due the same day.

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

type Book = { owner: User; spaceId: string; accountId: string };

const api = (user: User, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  h.inject({ method, url, session: user.token, payload: payload as Record<string, unknown> | undefined });

async function book(): Promise<Book> {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner);
  const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Bank', currency: 'EUR' });
  return { owner, spaceId, accountId: account.id };
}

async function document(b: Book, fields: Record<string, unknown>, send: boolean) {
  const created = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices`, {
    account_id: b.accountId,
    client_name: 'Acme GmbH',
    line_items: [{ description: 'Work', unit_price: '100', quantity: '3' }],
    ...fields,
  });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().id as string;
  if (send) {
    const sent = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices/${id}/send`, {
      via: 'none',
    });
    expect(sent.statusCode, sent.body).toBe(200);
  }
  return id;
}

async function pay(b: Book, id: string, amount: string) {
  const res = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices/${id}/payments`, { amount });
  expect(res.statusCode, res.body).toBe(200);
}

type Day = { currency: string; due_on: string; invoices: string; owed: string };

/** The kept sums, and the same figures summed from the invoices themselves; days at zero left out. */
async function keptAndSummed(spaceId: string): Promise<{ kept: Day[]; summed: Day[] }> {
  const kept = await sql<Day>`
    SELECT currency, due_on::text AS due_on, invoices::text AS invoices, owed::text AS owed
    FROM invoice_owed_days WHERE space_id = ${spaceId} AND invoices > 0
    ORDER BY currency, due_on`.execute(h.db);
  const summed = await sql<Day>`
    SELECT currency, due_on::text AS due_on, COUNT(*)::text AS invoices,
      SUM(GREATEST(total - credited_amount - paid_amount, 0))::text AS owed
    FROM invoices
    WHERE space_id = ${spaceId} AND kind = 'invoice' AND status IN ('sent', 'partial')
    GROUP BY currency, due_on ORDER BY currency, due_on`.execute(h.db);
  const exact = (rows: Day[]) => rows.map((row) => ({ ...row, owed: Number(row.owed).toFixed(8) }));
  return { kept: exact(kept.rows), summed: exact(summed.rows) };
}

async function expectInStep(spaceId: string) {
  const { kept, summed } = await keptAndSummed(spaceId);
  expect(kept).toEqual(summed);
  return kept;
}

describe('the owed-by-due-day sums', () => {
  it('follow sends, payments, credit notes, voids, quotes and drafts', async () => {
    const b = await book();
    const early = await document(b, { due_on: '2020-01-31' }, true);
    const sameDay = await document(b, { due_on: '2020-01-31' }, true);
    const later = await document(b, { due_on: '2020-02-15' }, true);
    await document(b, { due_on: '2020-01-31' }, false); // a draft owes nothing
    await document(b, { kind: 'quote', due_on: '2020-01-31' }, true); // nor does a quote
    expect(await expectInStep(b.spaceId)).toEqual([
      { currency: 'EUR', due_on: '2020-01-31', invoices: '2', owed: '600.00000000' },
      { currency: 'EUR', due_on: '2020-02-15', invoices: '1', owed: '300.00000000' },
    ]);

    await pay(b, early, '120');
    await expectInStep(b.spaceId);
    await pay(b, early, '180');
    const credit = await document(
      b,
      {
        kind: 'credit_note',
        corrects_invoice_id: sameDay,
        line_items: [{ description: 'Goodwill', unit_price: '50' }],
      },
      false,
    );
    expect(await expectInStep(b.spaceId)).toEqual([
      { currency: 'EUR', due_on: '2020-01-31', invoices: '1', owed: '250.00000000' },
      { currency: 'EUR', due_on: '2020-02-15', invoices: '1', owed: '300.00000000' },
    ]);
    const voidedCredit = await api(
      b.owner,
      'POST',
      `/app/api/spaces/${b.spaceId}/invoices/${credit}/void`,
      {},
    );
    expect(voidedCredit.statusCode, voidedCredit.body).toBe(200);
    await expectInStep(b.spaceId);
    const voided = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices/${later}/void`, {});
    expect(voided.statusCode, voided.body).toBe(200);
    expect(await expectInStep(b.spaceId)).toEqual([
      { currency: 'EUR', due_on: '2020-01-31', invoices: '1', owed: '300.00000000' },
    ]);

    // Home sums the days before today: the invoice due 2020-01-31 is overdue.
    const home = await h.inject({
      method: 'GET',
      url: `/app/books/${b.spaceId}`,
      headers: { cookie: `tb_session=${b.owner.token}` },
    });
    expect(home.statusCode).toBe(200);
    expect(home.body.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ')).toMatch(/1 invoice 300[.,]00 EUR/);
  });

  it('stay in step when payments on invoices due the same day arrive at once', async () => {
    const b = await book();
    const ids = await Promise.all(
      Array.from({ length: 6 }, () => document(b, { due_on: '2021-03-01' }, true)),
    );
    const results = await Promise.all(
      ids.map((id, index) =>
        api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices/${id}/payments`, {
          amount: index % 2 === 0 ? '300' : '100',
        }),
      ),
    );
    for (const res of results) expect(res.statusCode, res.body).toBe(200);
    expect(await expectInStep(b.spaceId)).toEqual([
      { currency: 'EUR', due_on: '2021-03-01', invoices: '3', owed: '600.00000000' },
    ]);
  });
});
