import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScreeningList } from '../src/features/screening/index.ts';
import { createHarness, type Harness, type User } from './harness.ts';
import { type Book, makeBook } from './payouts-setup.ts';
import { holdScreeningList } from './support/turns.ts';

// The Payments out screens over HTTP: who may open and write each one, and that each write the
// pages make is the app API's own (approval rules, policy blocks, screening holds, bank files,
// transfers), with its refusals shown in place.

// This file loads its own sanctions list (the database's current one).
holdScreeningList();

const FIXTURE = 'test/fixtures/sdn-sample.xml';
const UUID_A = '00000000-0000-4000-8000-000000000001';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

let h: Harness;
let b: Book;
let stranger: User;
beforeAll(async () => {
  h = await createHarness();
  const loaded = await loadScreeningList(
    { db: h.db, clock: h.clock },
    readFileSync(FIXTURE, 'utf8'),
    FIXTURE,
  );
  expect(loaded).toMatchObject({ ok: true });
  b = await makeBook(h);
  stranger = await h.signup('Stranger');
  await h.createSpace(stranger);
});
afterAll(async () => {
  await b.ledgerSound();
  await h.close();
});

const cookie = (user: User) => `tb_session=${user.token}`;
const page = (user: User | null, path: string) =>
  h.inject({
    method: 'GET',
    url: `/app/books/${b.spaceId}/${path}`,
    headers: user ? { cookie: cookie(user) } : {},
  });
const submit = (user: User | null, path: string, fields: Record<string, string> = {}) =>
  h.inject({
    method: 'POST',
    url: `/app/books/${b.spaceId}/${path}`,
    headers: user ? { ...FORM, cookie: cookie(user) } : FORM,
    payload: new URLSearchParams(user ? { ...fields, _csrf: user.csrf } : fields).toString(),
  });
/** A contact of the book's address book with US bank requisites. */
async function savedContact(name = 'Supplier Inc') {
  const res = await h.inject({
    method: 'POST',
    url: `/app/api/spaces/${b.spaceId}/contacts`,
    session: b.owner.token,
    payload: {
      name,
      kind: 'company',
      addresses: [
        {
          label: 'Bank',
          address: '',
          requisites: {
            scheme: 'us_ach',
            account_number: '000123456789',
            routing_number: '011000015',
            holder: name,
            account_type: 'checking',
          },
        },
      ],
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

const text = (body: string) => body.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

async function apiPayment(pid: string) {
  const res = await b.get(b.owner, `/payments/${pid}`);
  expect(res.statusCode).toBe(200);
  return res.json();
}

/** A payment made through the create form; answers its id from the 303's address. */
async function createByForm(user: User, fields: Record<string, string>) {
  const res = await submit(user, 'payments-out', {
    account_id: b.bank.id,
    rail: 'book',
    payee: 'Acme Supplies',
    ...fields,
  });
  expect(res.statusCode, res.body).toBe(303);
  const match = /payments-out\/([0-9a-f-]{36})\?done=created$/.exec(String(res.headers.location));
  expect(match).not.toBeNull();
  return match![1]!;
}

describe('auth on every Payments out page', () => {
  let pid: string;
  const gets = () => [
    'payments-out',
    'payments-out?status=blocked',
    'payments-out/rules',
    'payments-out/screening',
    'payments-out/transfers',
    `payments-out/${pid}`,
  ];
  const posts = (): [string, Record<string, string>][] => [
    ['payments-out', { account_id: b.bank.id, rail: 'book', payee: 'X', amount: '1' }],
    [`payments-out/${pid}/approve`, {}],
    [`payments-out/${pid}/reject`, { reason: 'no' }],
    [`payments-out/${pid}/release`, { reason: 'checked' }],
    [`payments-out/${pid}/cancel`, {}],
    [`payments-out/${pid}/executed`, { reference: 'REF' }],
    [`payments-out/${pid}/chain-tx`, { tx_hash: `0x${'a'.repeat(64)}` }],
    ['payments-out/rules/approval', { min_amount: '1', currency: 'USD', required_approvals: '1' }],
    ['payments-out/rules/policy', { kind: 'max_per_payment', amount: '1' }],
    [`payments-out/rules/approval/${UUID_A}/remove`, {}],
    ['payments-out/transfers', { from_account_id: b.bank.id, to_account_id: UUID_A, amount: '1' }],
  ];
  beforeAll(async () => {
    pid = (await b.pay(b.member, { amount: '1', payee: 'Auth check' })).json().id;
  });

  it('sends a visitor without a session to log in, on every page and every write', async () => {
    for (const path of gets()) {
      const res = await page(null, path);
      expect(res.statusCode, path).toBe(303);
      expect(res.headers.location, path).toBe(
        `/app/login?next=${encodeURIComponent(`/app/books/${b.spaceId}/${path}`)}`,
      );
    }
    for (const [path, fields] of posts()) {
      const res = await submit(null, path, fields);
      expect(res.statusCode, path).toBe(303);
      expect(res.headers.location, path).toBe('/app/login');
    }
  });

  it('answers 404 to someone from another book, on every page and every write, and changes nothing', async () => {
    for (const path of gets()) {
      const res = await page(stranger, path);
      expect(res.statusCode, path).toBe(404);
      expect(res.body, path).not.toContain('Auth check');
    }
    for (const [path, fields] of posts())
      expect((await submit(stranger, path, fields)).statusCode, path).toBe(404);
    expect((await apiPayment(pid)).status).toBe('executed');
    expect((await b.get(b.owner, '/approval-rules')).json().items).toEqual([]);
  });

  it('opens every page for a viewer without a write control, and refuses every write of theirs', async () => {
    for (const path of gets()) {
      const res = await page(b.viewer, path);
      expect(res.statusCode, path).toBe(200);
      expect(res.body, path).not.toMatch(/<form method="post" action="\/app\/books\/[^"]*\/payments-out/);
    }
    for (const [path, fields] of posts())
      expect((await submit(b.viewer, path, fields)).statusCode, path).toBe(403);
    expect((await b.get(b.owner, '/approval-rules')).json().items).toEqual([]);
  });

  it('lets the maker cancel their payment before it leaves, recorded in its history, and not twice', async () => {
    const pid = await createByForm(b.member, { rail: 'bank', amount: '2', contact_id: await savedContact() });
    expect((await page(b.member, `payments-out/${pid}`)).body).toContain(`payments-out/${pid}/cancel`);
    expect((await submit(b.member, `payments-out/${pid}/cancel`)).statusCode).toBe(303);
    const detail = await page(b.member, `payments-out/${pid}?done=cancel`);
    expect(text(detail.body)).toContain('Payment cancelled.');
    expect(text(/<ol class="history">[\s\S]*?<\/ol>/.exec(detail.body)?.[0] ?? '')).toMatch(
      /Executing .*Cancelled/,
    );
    expect(detail.body).not.toContain(`payments-out/${pid}/cancel`);
    const again = await submit(b.member, `payments-out/${pid}/cancel`);
    expect(again.statusCode).toBe(422);
    expect(text(again.body)).toContain('A payment that is cancelled cannot be cancelled.');
  });

  it('answers 404 for a payment of another book opened inside this one', async () => {
    const other = await makeBook(h);
    const theirs = (await other.pay(other.member, { amount: '1' })).json().id;
    expect((await page(b.owner, `payments-out/${theirs}`)).statusCode).toBe(404);
    expect((await submit(b.owner, `payments-out/${theirs}/cancel`)).statusCode).toBe(404);
  });
});

describe('payments through the pages', () => {
  it('lists payments newest first, 50 a page by cursor, filtered by status, with an empty state', async () => {
    const book = await makeBook(h);
    const empty = await h.inject({
      method: 'GET',
      url: `/app/books/${book.spaceId}/payments-out`,
      headers: { cookie: cookie(book.owner) },
    });
    expect(text(empty.body)).toContain('No payments out yet');
    for (let i = 0; i < 51; i += 1) {
      expect((await book.pay(book.member, { amount: '1', payee: `Payee ${i}` })).statusCode).toBe(201);
    }
    const open = (query: string) =>
      h.inject({
        method: 'GET',
        url: `/app/books/${book.spaceId}/payments-out${query}`,
        headers: { cookie: cookie(book.owner) },
      });
    const first = await open('');
    const rows = first.body.match(/<tr><td data-label=/g) ?? [];
    expect(rows).toHaveLength(50);
    expect(text(first.body).indexOf('Payee 50')).toBeLessThan(text(first.body).indexOf('Payee 49'));
    expect(text(first.body)).not.toContain('Payee 0 ');
    const next = /href="([^"]*starting_after=[^"]+)"/.exec(first.body)?.[1]?.replace(/&amp;/g, '&');
    expect(next).toBeDefined();
    const second = await h.inject({ method: 'GET', url: next!, headers: { cookie: cookie(book.owner) } });
    expect(second.body.match(/<tr><td data-label=/g)).toHaveLength(1);
    expect(text(second.body)).toContain('Payee 0');
    expect(text(second.body)).toContain('1.00 USD');
    const blocked = await open('?status=blocked');
    expect(text(blocked.body)).toContain('No blocked payments');
    expect((await open('?status=nonsense')).statusCode).toBe(400);
  });

  it('shows a refused create in place: a bad amount beside its field, a wrong currency as a sentence', async () => {
    const bad = await submit(b.member, 'payments-out', {
      account_id: b.bank.id,
      rail: 'book',
      payee: 'Acme',
      amount: 'twelve',
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toMatch(/id="field-amount-error"/);
    expect(bad.body).toContain('value="twelve"');
    const currency = await submit(b.member, 'payments-out', {
      account_id: b.bank.id,
      rail: 'book',
      payee: 'Acme',
      amount: '5',
      currency: 'EUR',
    });
    expect(currency.statusCode).toBe(422);
    expect(text(currency.body)).toContain('The account holds USD; pay in USD.');
    expect(currency.body).toMatch(/id="field-currency-error"/);
  });

  it('needs an approval over a rule; the maker and a member cannot approve, another admin can, and it executes with its entry', async () => {
    const rule = await submit(b.owner, 'payments-out/rules/approval', {
      min_amount: '100',
      currency: 'USD',
      required_approvals: '1',
    });
    expect(rule.statusCode).toBe(303);
    const pid = await createByForm(b.owner, { amount: '150', note: 'Rent' });
    const detail = await page(b.owner, `payments-out/${pid}?done=created`);
    expect(text(detail.body)).toContain('Awaiting approval');
    expect(text(detail.body)).toMatch(
      /Needs 1 approval by the rule “from 100\.00 USD ?, 1 approval” ?; has 0\./,
    );
    expect(detail.body).not.toContain(`payments-out/${pid}/approve`);
    expect((await page(b.member, `payments-out/${pid}`)).body).not.toContain(`payments-out/${pid}/approve`);
    const byMaker = await submit(b.owner, `payments-out/${pid}/approve`);
    expect(byMaker.statusCode).toBe(403);
    expect(text(byMaker.body)).toContain('The person who made a payment cannot approve it.');
    const byMember = await submit(b.member, `payments-out/${pid}/approve`);
    expect(byMember.statusCode).toBe(403);
    expect(text(byMember.body)).toContain('Only an owner or an admin can approve');
    expect((await apiPayment(pid)).approvals).toBe(0);
    const approved = await submit(b.admin, `payments-out/${pid}/approve`);
    expect(approved.statusCode).toBe(303);
    const done = await page(b.admin, `payments-out/${pid}?done=approve`);
    const read = text(done.body);
    expect(read).toContain('Your approval is recorded.');
    expect(read).toContain('Executed');
    expect(read).toContain('150.00 USD');
    expect(read).toMatch(/Approved by Admin/);
    expect(read).toMatch(/Created by Owner .*Awaiting approval.*Executed/);
    const payment = await apiPayment(pid);
    expect(done.body).toContain(`/app/books/${b.spaceId}/ledger/${payment.transaction_id}`);
  });

  it('lets one of two concurrent approvals execute the payment, and the other is refused in place', async () => {
    const pid = await createByForm(b.member, { amount: '120' });
    const [one, two] = await Promise.all([
      submit(b.admin, `payments-out/${pid}/approve`),
      submit(b.admin2, `payments-out/${pid}/approve`),
    ]);
    expect([one.statusCode, two.statusCode].sort()).toEqual([303, 422]);
    const refused = one.statusCode === 422 ? one : two;
    expect(text(refused.body)).toContain('A payment that is executed cannot be approved.');
    const payment = await apiPayment(pid);
    expect(payment).toMatchObject({ status: 'executed', approvals: 1 });
    const entries = await h.db
      .selectFrom('ledger_entries')
      .select('id')
      .where('space_id', '=', b.spaceId)
      .where('cause_id', '=', pid)
      .execute();
    expect(entries).toHaveLength(1);
  });

  it('shows a payment a policy rule blocked with its reason, and an admin rejects it with a reason', async () => {
    const book = await makeBook(h);
    const post = (path: string, fields: Record<string, string>) =>
      h.inject({
        method: 'POST',
        url: `/app/books/${book.spaceId}/${path}`,
        headers: { ...FORM, cookie: cookie(book.owner) },
        payload: new URLSearchParams({ ...fields, _csrf: book.owner.csrf }).toString(),
      });
    const missing = await post('payments-out/rules/policy', { kind: 'max_per_payment' });
    expect(missing.statusCode).toBe(422);
    expect(missing.body).toMatch(/id="field-amount-error"/);
    expect(
      (await post('payments-out/rules/policy', { kind: 'max_per_payment', amount: '50' })).statusCode,
    ).toBe(303);
    const currencies = await post('payments-out/rules/policy', {
      kind: 'allowed_currencies',
      currencies: 'usd, eur',
    });
    expect(currencies.statusCode).toBe(303);
    const wrongCode = await post('payments-out/rules/policy', {
      kind: 'allowed_currencies',
      currencies: 'usd, e-ur',
    });
    expect(wrongCode.statusCode).toBe(422);
    expect(text(wrongCode.body)).toContain('“e-ur” is not a currency code');
    expect(wrongCode.body).toMatch(/id="field-currencies-error"/);
    const rules = (await book.get(book.owner, '/policy-rules')).json().items;
    expect(rules.map((rule: { currencies: string[] | null }) => rule.currencies)).toContainEqual([
      'USD',
      'EUR',
    ]);
    const pid = (await book.pay(book.member, { amount: '75' })).json().id;
    const detail = await h.inject({
      method: 'GET',
      url: `/app/books/${book.spaceId}/payments-out/${pid}`,
      headers: { cookie: cookie(book.owner) },
    });
    expect(text(detail.body)).toContain(
      'Blocked. Over the most one payment may be (a policy rule). policy_max_per_payment',
    );
    expect((await post(`payments-out/${pid}/reject`, { reason: 'Too much' })).statusCode).toBe(303);
    expect((await book.get(book.owner, `/payments/${pid}`)).json()).toMatchObject({
      status: 'rejected',
      reject_reason: 'Too much',
    });
    const rejected = await h.inject({
      method: 'GET',
      url: `/app/books/${book.spaceId}/payments-out/${pid}`,
      headers: { cookie: cookie(book.owner) },
    });
    const history = text(/<ol class="history">[\s\S]*?<\/ol>/.exec(rejected.body)?.[0] ?? '');
    expect(history).toMatch(/Created by Member .*Blocked .*Over the most one payment .*Rejected .*Too much/);
    expect(text(rejected.body)).toContain('Rejected by Owner: “Too much”');
    const rulesPage = await h.inject({
      method: 'GET',
      url: `/app/books/${book.spaceId}/payments-out/rules`,
      headers: { cookie: cookie(book.owner) },
    });
    expect(text(rulesPage.body)).toContain('50.00 USD');
    const id = rules[0].id as string;
    expect((await post(`payments-out/rules/policy/${id}/remove`, {})).statusCode).toBe(303);
    expect((await post(`payments-out/rules/policy/${id}/remove`, {})).statusCode).toBe(404);
  });
});

describe('screening, bank files and transfers through the pages', () => {
  it('lists the loaded list and the held payments; an owner releases one only with a reason, which is recorded', async () => {
    const pid = (await b.pay(b.member, { amount: '3', payee: 'El Tesorero' })).json().id;
    const screening = await page(b.owner, 'payments-out/screening');
    const read = text(screening.body);
    expect(read).toContain('Published 2026-11-20');
    expect(read).toMatch(/Entries \d+/);
    expect(screening.body).toContain(`payments-out/${pid}`);
    expect(read).toContain('Held by screening');
    const admin = await page(b.admin, `payments-out/${pid}`);
    expect(admin.body).not.toContain(`payments-out/${pid}/release`);
    expect((await submit(b.admin, `payments-out/${pid}/release`, { reason: 'x' })).statusCode).toBe(403);
    const empty = await submit(b.owner, `payments-out/${pid}/release`, {});
    expect(empty.statusCode).toBe(422);
    expect(empty.body).toMatch(/id="field-reason-error"/);
    expect((await apiPayment(pid)).status).toBe('blocked');
    const released = await submit(b.owner, `payments-out/${pid}/release`, {
      reason: 'Namesake, checked the ID',
    });
    expect(released.statusCode).toBe(303);
    const detail = text((await page(b.owner, `payments-out/${pid}`)).body);
    expect(detail).toContain('Screening hold released by Owner: “Namesake, checked the ID”');
    expect(detail).toContain('Executed');
    expect(await apiPayment(pid)).toMatchObject({
      status: 'executed',
      release_reason: 'Namesake, checked the ID',
    });
  });

  it('downloads a bank payment’s file and marks it executed with the bank’s reference', async () => {
    // A contact of the book's address book (made in the app): the create form offers it.
    const contactId = await savedContact('Supplier Two');
    const form = await page(b.member, 'payments-out');
    expect(form.body).toContain(`<option value="${contactId}">Supplier Two</option>`);
    const pid = await createByForm(b.member, { rail: 'bank', amount: '42.5', contact_id: contactId });
    expect((await page(b.member, `payments-out/${pid}`)).body).not.toContain('/file');
    expect((await page(b.member, `payments-out/${pid}/file`)).statusCode).toBe(403);
    const detail = await page(b.admin, `payments-out/${pid}`);
    expect(detail.body).toContain(`payments-out/${pid}/file`);
    const file = await page(b.admin, `payments-out/${pid}/file`);
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-disposition']).toMatch(/^attachment; filename=".+\.csv"$/);
    expect(file.body).toContain('42.50');
    const noRef = await submit(b.admin, `payments-out/${pid}/executed`, {});
    expect(noRef.statusCode).toBe(422);
    expect(noRef.body).toMatch(/id="field-reference-error"/);
    expect(
      (await submit(b.admin, `payments-out/${pid}/executed`, { reference: 'BANK-778' })).statusCode,
    ).toBe(303);
    expect(text((await page(b.admin, `payments-out/${pid}`)).body)).toContain('Bank reference BANK-778');
    expect((await apiPayment(pid)).status).toBe('executed');
  });

  it('moves money between own accounts; across currencies it needs both amounts, said in place', async () => {
    const eur = await h.makeAccount(b.spaceId, { kind: 'bank', name: 'Euro account', currency: 'EUR' });
    const fields = { from_account_id: b.bank.id, to_account_id: eur.id, amount: '10' };
    const refused = await submit(b.admin, 'payments-out/transfers', fields);
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toMatch(/id="field-to_amount-error"/);
    const member = await submit(b.member, 'payments-out/transfers', { ...fields, to_amount: '9' });
    expect(member.statusCode).toBe(403);
    const moved = await submit(b.admin, 'payments-out/transfers', { ...fields, to_amount: '9.20' });
    expect(moved.statusCode).toBe(303);
    const done = await h.inject({
      method: 'GET',
      url: String(moved.headers.location),
      headers: { cookie: cookie(b.admin) },
    });
    expect(text(done.body)).toContain('Transfer booked.');
    const entry = /ledger\/([0-9a-f-]{36})/.exec(done.body)?.[1];
    expect(entry).toBeDefined();
    expect(await b.balance(eur.id)).toBe('9.20000000');
  });
});
