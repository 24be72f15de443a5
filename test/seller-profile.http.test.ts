import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';

// The seller profile of a book (GET/PATCH /app/api/spaces/{id}/profile) and the seller every
// document keeps from the moment it is sent.

let h: Harness;
beforeAll(async () => {
  // Mail is queued, never delivered: no worker drains the outbox in this file.
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000', SMTP_URL: 'smtp://127.0.0.1:9' } });
});
afterAll(() => h.close());

type Book = { owner: User; spaceId: string; accountId: string };

async function book(name = 'Profile book'): Promise<Book> {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner, { name });
  const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Main bank (EUR)', currency: 'EUR' });
  return { owner, spaceId, accountId: account.id };
}

function api(user: User, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: Record<string, unknown>) {
  return h.inject({ method, url, session: user.token, ...(payload ? { payload } : {}) });
}

const FULL = {
  legal_name: 'Nordlicht Studio GmbH',
  trading_name: 'Nordlicht',
  address: {
    line1: 'Hafenstraße 12',
    line2: 'Haus B',
    postal_code: '20457',
    city: 'Hamburg',
    region: 'Hamburg',
    country: 'DE',
  },
  vat_id: 'DE123456789',
  tax_number: '22/815/08150',
  registration_id: 'HRB 12345',
  email: 'billing@nordlicht.example',
  phone: '+49 40 123456',
  website: 'https://nordlicht.example',
  payment_terms_days: 30,
  invoice_footer: 'Thank you for your business.',
};

const patchProfile = (b: Book, body: Record<string, unknown>, user: User = b.owner) =>
  api(user, 'PATCH', `/app/api/spaces/${b.spaceId}/profile`, body);

async function invoice(b: Book, extra: Record<string, unknown> = {}) {
  const res = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices`, {
    account_id: b.accountId,
    client_name: 'Acme GmbH',
    client_email: 'ap@acme.example',
    due_on: '2099-06-30',
    line_items: [{ description: 'Design', unit_price: '800', quantity: '3', unit: 'day' }],
    ...extra,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; number: string; token: string; url: string };
}

const send = (b: Book, id: string, via = 'none') =>
  api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices/${id}/send`, { via });

function pdfText(pdf: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'tb-pdf-'));
  writeFileSync(join(dir, 'doc.pdf'), pdf);
  return execFileSync('pdftotext', ['-layout', join(dir, 'doc.pdf'), '-'], { encoding: 'utf8' });
}

describe('the seller profile', () => {
  it('is empty at first, is written by the owner field by field, and is read by any member', async () => {
    const b = await book();
    const first = await api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/profile`);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({
      legal_name: '',
      display_name: 'Profile book',
      payment_terms_days: 14,
    });
    const saved = await patchProfile(b, FULL);
    expect(saved.statusCode, saved.body).toBe(200);
    expect(saved.json()).toMatchObject({ ...FULL, display_name: 'Nordlicht', space_id: b.spaceId });
    const partly = await patchProfile(b, { trading_name: '' });
    expect(partly.json()).toMatchObject({
      trading_name: '',
      display_name: 'Nordlicht Studio GmbH',
      vat_id: FULL.vat_id,
    });
    const moved = await patchProfile(b, { address: { line1: 'Elbchaussee 1', country: 'DE' } });
    expect(moved.json().address).toEqual({
      line1: 'Elbchaussee 1',
      line2: '',
      postal_code: '',
      city: '',
      region: '',
      country: 'DE',
    });
    const member = await h.signup('Member');
    await h.addMember(b.owner, b.spaceId, member, 'member');
    const read = await api(member, 'GET', `/app/api/spaces/${b.spaceId}/profile`);
    expect(read.json().legal_name).toBe(FULL.legal_name);
    expect((await patchProfile(b, { legal_name: 'Not me' }, member)).statusCode).toBe(403);
    const stranger = await h.signup('Stranger');
    expect((await api(stranger, 'GET', `/app/api/spaces/${b.spaceId}/profile`)).statusCode).toBe(404);
    expect((await patchProfile(b, { legal_name: 'Not me' }, stranger)).statusCode).toBe(404);
    expect((await api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/profile`)).json().legal_name).toBe(
      FULL.legal_name,
    );
  });

  it.each([
    [{ address: { country: 'XX' } }, ['body', 'address', 'country']],
    [{ address: { country: 'de' } }, ['body', 'address', 'country']],
    [{ email: 'not an email' }, ['body', 'email']],
    [{ website: 'ftp://files.example' }, ['body', 'website']],
    [{ payment_terms_days: 400 }, ['body', 'payment_terms_days']],
    [{ payment_terms_days: 1.5 }, ['body', 'payment_terms_days']],
    [{ public_handle: 'Has Spaces' }, ['body', 'public_handle']],
    [{ public_handle: '-edge-' }, ['body', 'public_handle']],
    [{ public_handle: 'ab' }, ['body', 'public_handle']],
    [{ legal_name: 'x'.repeat(201) }, ['body', 'legal_name']],
  ])('refuses %j with the 422 validation shape, and changes nothing', async (body, loc) => {
    const b = await book();
    await patchProfile(b, FULL);
    const res = await patchProfile(b, body);
    expect(res.statusCode).toBe(422);
    expect(res.json().detail.map((item: { loc: unknown }) => item.loc)).toContainEqual(loc);
    expect((await api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/profile`)).json()).toMatchObject(FULL);
  });

  it('ignores names a plain object inherits (hasOwnProperty, toString) as it ignores any unknown field', async () => {
    const b = await book();
    await patchProfile(b, { legal_name: 'Kept GmbH' });
    const res = await patchProfile(b, { hasOwnProperty: 1, toString: 'x', constructor: {} });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ legal_name: 'Kept GmbH' });
  });

  it('changes the public handle once it is free; a taken one is 409 and the handle stays', async () => {
    const a = await book();
    const b = await book();
    const handle = `nordlicht-${a.spaceId.slice(0, 8)}`;
    const moved = await patchProfile(a, { public_handle: handle });
    expect(moved.json().public_handle).toBe(handle);
    const space = await api(a.owner, 'GET', `/app/api/spaces/${a.spaceId}`);
    expect(space.json().public_handle).toBe(handle);
    const taken = await patchProfile(b, { public_handle: handle, legal_name: 'B Ltd' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toMatchObject({ error: 'conflict', details: { field: 'public_handle' } });
    expect((await api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/profile`)).json().legal_name).toBe('');
  });
});

describe('the seller on documents', () => {
  it('prints the trading name on the public page, the mail and the PDF, and keeps it once sent', async () => {
    const b = await book();
    await patchProfile(b, FULL);
    const draft = await invoice(b);
    const draftPdf = await api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/invoices/${draft.id}/pdf`);
    expect(pdfText(draftPdf.rawPayload)).toMatch(/^Nordlicht\s+Acme GmbH/m);
    expect((await h.inject({ method: 'GET', url: `/i/${draft.token}` })).statusCode).toBe(404);
    const sent = await send(b, draft.id, 'email');
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.json()).toMatchObject({
      seller_name: 'Nordlicht',
      seller_tax_id: 'DE123456789',
      seller_reg_number: 'HRB 12345',
      seller_email: 'billing@nordlicht.example',
      seller_country: 'DE',
      seller_address: 'Hafenstraße 12\nHaus B\n20457 Hamburg\nHamburg\nGermany',
    });
    const mail = await h.db
      .selectFrom('mail_outbox')
      .select(['subject', 'from_name'])
      .where('invoice_id', '=', draft.id)
      .executeTakeFirstOrThrow();
    expect(mail).toEqual({ subject: `Invoice ${draft.number} from Nordlicht`, from_name: 'Nordlicht' });
    const page = await h.inject({ method: 'GET', url: `/i/${draft.token}` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Nordlicht');

    await patchProfile(b, { trading_name: 'Renamed', vat_id: 'DE999999999' });
    const kept = await api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/invoices/${draft.id}`);
    expect(kept.json()).toMatchObject({ seller_name: 'Nordlicht', seller_tax_id: 'DE123456789' });
    const keptPdf = await api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/invoices/${draft.id}/pdf`);
    expect(pdfText(keptPdf.rawPayload)).toMatch(/^Nordlicht\s+Acme GmbH/m);
    expect((await h.inject({ method: 'GET', url: `/i/${draft.token}` })).body).not.toContain('Renamed');
    await send(b, draft.id);
    const resent = await api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/invoices/${draft.id}`);
    expect(resent.json().seller_name).toBe('Nordlicht');
    const next = await invoice(b);
    expect((await send(b, next.id)).json()).toMatchObject({
      seller_name: 'Renamed',
      seller_tax_id: 'DE999999999',
    });
  });

  it('falls back to the legal name, then the book name, never an empty name or the handle', async () => {
    const b = await book('Fallback book');
    const bare = await invoice(b);
    expect((await send(b, bare.id)).json().seller_name).toBe('Fallback book');
    await patchProfile(b, { legal_name: 'Legal Only Ltd' });
    const legal = await invoice(b);
    expect((await send(b, legal.id)).json().seller_name).toBe('Legal Only Ltd');
  });

  it('keeps the seller a mirrored invoice set and fills what it left out from the profile', async () => {
    const b = await book();
    await patchProfile(b, FULL);
    const key = await h.issueKey(b.owner, b.spaceId);
    const created = await h.inject({
      method: 'POST',
      url: '/integration/invoices',
      key: key.key,
      payload: {
        account_id: b.accountId,
        client_name: 'Acme GmbH',
        due_on: '2099-06-30',
        number: `EXT-${b.spaceId.slice(0, 8)}`,
        line_items: [{ description: 'Hosting', unit_price: '10' }],
        seller: { name: 'Bridge Entity BV', tax_id: 'NL000099998B57' },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id;
    const sent = await h.inject({
      method: 'POST',
      url: `/integration/invoices/${id}/send`,
      key: key.key,
      payload: { via: 'none' },
    });
    expect(sent.json()).toMatchObject({
      number: `EXT-${b.spaceId.slice(0, 8)}`,
      seller_name: 'Bridge Entity BV',
      seller_tax_id: 'NL000099998B57',
      seller_email: 'billing@nordlicht.example',
      seller_website: 'https://nordlicht.example',
    });
  });

  it('gives a credit note the seller of the moment it is issued', async () => {
    const b = await book();
    await patchProfile(b, FULL);
    const target = await invoice(b);
    await send(b, target.id);
    const credit = await invoice(b, {
      kind: 'credit_note',
      corrects_invoice_id: target.id,
      line_items: [{ description: 'Refund', unit_price: '100' }],
    });
    await patchProfile(b, { trading_name: 'Later name' });
    const read = await api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/invoices/${credit.id}`);
    expect(read.json().seller_name).toBe('Nordlicht');
  });
});
