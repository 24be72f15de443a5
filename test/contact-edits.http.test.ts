import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';

// Editing a contact: the app API's PATCH and the contact's page both change every field and the
// requisites through the contacts' own rules, record who changed what and when, and never reach
// the buyer of an invoice already sent.

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

const SEPA = { scheme: 'sepa', iban: 'DE89 3704 0044 0532 0130 00', holder: 'Globex Ltd' };

async function book() {
  const owner = await h.signup('Olivia Owner');
  const spaceId = await h.createSpace(owner);
  const made = await h.inject({
    method: 'POST',
    url: `/app/api/spaces/${spaceId}/contacts`,
    session: owner.token,
    payload: {
      name: 'Globex Ltd',
      kind: 'company',
      email: 'ap@globex.test',
      country: 'GB',
      addresses: [{ label: 'Main', requisites: SEPA }],
    },
  });
  expect(made.statusCode, made.body).toBe(201);
  const contactId = made.json().id as string;
  return { owner, spaceId, contactId, api: `/app/api/spaces/${spaceId}/contacts/${contactId}` };
}

function patch(user: User, url: string, payload: Record<string, unknown>) {
  return h.inject({ method: 'PATCH', url, session: user.token, payload });
}

function postForm(user: User, url: string, fields: [string, string][]) {
  return h.inject({
    method: 'POST',
    url,
    headers: { cookie: `tb_session=${user.token}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams([['_csrf', user.csrf], ...fields]).toString(),
  });
}

describe('PATCH /app/api/spaces/{id}/contacts/{contact_id}', () => {
  it('changes the fields given, keeps the others, and records who changed what', async () => {
    const b = await book();
    const res = await patch(b.owner, b.api, {
      email: 'billing@globex.test',
      tax_id: 'GB123456789',
      tags: ['vip'],
      addresses: [
        {
          label: 'Main',
          requisites: {
            scheme: 'uk',
            account_number: '12345678',
            sort_code: '12-34-56',
            holder: 'Globex Ltd',
          },
        },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      name: 'Globex Ltd',
      country: 'GB',
      email: 'billing@globex.test',
      tax_id: 'GB123456789',
      tags: ['vip'],
      addresses: [{ label: 'Main', is_primary: true, requisites: { scheme: 'uk', sort_code: '123456' } }],
    });
    const edits = await h.inject({ method: 'GET', url: `${b.api}/edits`, session: b.owner.token });
    expect(edits.statusCode).toBe(200);
    const [edit, ...older] = edits.json().items;
    expect(older).toHaveLength(0);
    expect(edit.by).toBe('Olivia Owner');
    expect(Object.keys(edit.changed).sort()).toEqual(['addresses', 'email', 'tags', 'tax_id']);
    expect(edit.changed.email).toEqual({ from: 'ap@globex.test', to: 'billing@globex.test' });
    expect(edit.changed.addresses.from[0].requisites).toMatchObject({
      scheme: 'sepa',
      iban: 'DE89370400440532013000',
    });
  });

  it('records nothing when nothing changes (the same IBAN with spaces is the same IBAN)', async () => {
    const b = await book();
    const res = await patch(b.owner, b.api, {
      name: 'Globex Ltd',
      addresses: [{ label: 'Main', requisites: SEPA }],
    });
    expect(res.statusCode, res.body).toBe(200);
    const edits = await h.inject({ method: 'GET', url: `${b.api}/edits`, session: b.owner.token });
    expect(edits.json().items).toEqual([]);
  });

  it('refuses bad requisites with the contacts’ own rules (422 naming the field) and changes nothing', async () => {
    const b = await book();
    const res = await patch(b.owner, b.api, {
      email: 'new@globex.test',
      addresses: [{ requisites: { ...SEPA, iban: 'DE89 3704 0044 0532 0130 01' } }],
    });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      error: 'invalid_request',
      details: { field: 'addresses.0.requisites.iban' },
    });
    const read = await h.inject({ method: 'GET', url: b.api, session: b.owner.token });
    expect(read.json().email).toBe('ap@globex.test');
    const blank = await patch(b.owner, b.api, { name: '   ' });
    expect(blank.statusCode).toBe(422);
    const email = await patch(b.owner, b.api, { email: 'not an address' });
    expect(email.statusCode).toBe(422);
  });

  it('lets a viewer read but not edit, and answers 404 for another book’s contact', async () => {
    const b = await book();
    const viewer = await h.signup('Vera Viewer');
    await h.addMember(b.owner, b.spaceId, viewer, 'viewer');
    expect((await h.inject({ method: 'GET', url: b.api, session: viewer.token })).statusCode).toBe(200);
    expect((await patch(viewer, b.api, { name: 'Hijack' })).statusCode).toBe(403);
    const other = await book();
    const crossed = `/app/api/spaces/${other.spaceId}/contacts/${b.contactId}`;
    expect((await patch(other.owner, crossed, { name: 'Hijack' })).statusCode).toBe(404);
    expect((await h.inject({ method: 'GET', url: `${b.api}`, session: other.owner.token })).statusCode).toBe(
      404,
    );
  });
});

describe('a sent invoice and an edited contact', () => {
  it('keeps the buyer the invoice was sent to when the contact changes afterwards', async () => {
    const b = await book();
    const account = await h.makeAccount(b.spaceId, { kind: 'bank', name: 'Bank', currency: 'EUR' });
    const invoices = `/app/api/spaces/${b.spaceId}/invoices`;
    const made = await h.inject({
      method: 'POST',
      url: invoices,
      session: b.owner.token,
      payload: {
        account_id: account.id,
        contact_id: b.contactId,
        client_name: 'Globex Ltd',
        client_email: 'ap@globex.test',
        due_on: '2099-06-30',
        line_items: [{ description: 'Design', unit_price: '100', quantity: '1' }],
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    const invoice = `${invoices}/${made.json().id}`;
    const sent = await h.inject({
      method: 'POST',
      url: `${invoice}/send`,
      session: b.owner.token,
      payload: { via: 'none' },
    });
    expect(sent.json().status).toBe('sent');
    const edited = await patch(b.owner, b.api, {
      name: 'Globex Holdings plc',
      email: 'finance@globex.test',
      country: 'IE',
    });
    expect(edited.statusCode, edited.body).toBe(200);
    const read = await h.inject({ method: 'GET', url: invoice, session: b.owner.token });
    expect(read.json()).toMatchObject({
      contact_id: b.contactId,
      client_name: 'Globex Ltd',
      client_email: 'ap@globex.test',
    });
  });
});

describe('the contact page', () => {
  it('shows the contact, its Edit form filled in, and after a save the change in its history', async () => {
    const b = await book();
    const page = `/app/books/${b.spaceId}/contacts/${b.contactId}`;
    const shown = await h.inject({
      method: 'GET',
      url: page,
      headers: { cookie: `tb_session=${b.owner.token}` },
    });
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain('value="ap@globex.test"');
    expect(shown.body).toContain('value="DE89370400440532013000"');
    // What the book holds reads as on the pay page: the IBAN in fours, under "Tax ID".
    expect(shown.body).toContain('<dt>Requisites</dt><dd>SEPA DE89 3704 0044 0532 0130 00</dd>');
    expect(shown.body).toContain('<dt>Tax ID</dt>');
    expect(shown.body).toContain('<label for="field-tax_id">Tax ID</label>');
    expect(shown.body).not.toContain('Tax id');
    expect(shown.body).toContain('No changes yet');
    const saved = await postForm(b.owner, page, [
      ['name', 'Globex Ltd'],
      ['kind', 'company'],
      ['email', 'ap@globex.test'],
      ['country', ''],
      ['phone', '+44 20 7946 0000'],
      ['tags', 'vip'],
      ['tags', ''],
      ['addresses.0.label', 'Main'],
      ['addresses.0.requisites.scheme', 'sepa'],
      ['addresses.0.requisites.iban', 'GB82 WEST 1234 5698 7654 32'],
      ['addresses.0.requisites.holder', 'Globex Ltd'],
    ]);
    expect(saved.statusCode, saved.body).toBe(303);
    const after = await h.inject({
      method: 'GET',
      url: page,
      headers: { cookie: `tb_session=${b.owner.token}` },
    });
    expect(after.body).toContain('Olivia Owner');
    expect(after.body).toContain('Phone: (none) → +44 20 7946 0000');
    expect(after.body).toContain('Country: GB → (none)');
    expect(after.body).toContain('→ Main: SEPA (IBAN) GB82 WEST 1234 5698 7654 32 · Globex Ltd');
    const read = await h.inject({ method: 'GET', url: b.api, session: b.owner.token });
    expect(read.json()).toMatchObject({ country: '', phone: '+44 20 7946 0000', tags: ['vip'] });
  });

  it('answers a bad IBAN in place, beside its field, with what was typed kept', async () => {
    const b = await book();
    const page = `/app/books/${b.spaceId}/contacts/${b.contactId}`;
    const refused = await postForm(b.owner, page, [
      ['name', 'Globex Ltd'],
      ['email', 'ap@globex.test'],
      ['addresses.0.requisites.scheme', 'sepa'],
      ['addresses.0.requisites.iban', 'DE89 3704 0044 0532 0130 01'],
      ['addresses.0.requisites.holder', 'Globex Ltd'],
    ]);
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toMatch(/id="field-addresses\.0\.requisites\.iban-error">[^<]*mod-97/);
    expect(refused.body).toContain('value="DE89 3704 0044 0532 0130 01"');
    const edits = await h.inject({ method: 'GET', url: `${b.api}/edits`, session: b.owner.token });
    expect(edits.json().items).toEqual([]);
  });
});
