import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type Key } from './harness.ts';

const URL = '/integration/contacts';

let h: Harness;
let key: Key;

beforeAll(async () => {
  h = await createHarness();
  ({ key } = await h.world({ scopes: ['contacts'] }));
});

afterAll(() => h.close());

function post(payload: unknown, options: { key?: string; idempotencyKey?: string } = {}) {
  const headers: Record<string, string> = {};
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
  return h.inject({
    method: 'POST',
    url: URL,
    key: options.key ?? key.key,
    headers,
    payload: payload as object,
  });
}

async function contactsOf(spaceId: string) {
  return h.db.selectFrom('contacts').selectAll().where('space_id', '=', spaceId).execute();
}

const SEPA = {
  scheme: 'sepa',
  iban: 'de89 3704 0044 0532 0130 00',
  bic: 'cobadeffxxx',
  holder: 'Ada Lovelace',
};
const SWIFT = {
  scheme: 'swift',
  account_number: '0012 3456 789',
  swift_bic: 'CHASUS33',
  holder: 'Ada Lovelace',
  bank_name: 'JPMorgan Chase',
  bank_address: '383 Madison Avenue, New York',
};
const UK = { scheme: 'uk', account_number: '31926819', sort_code: '60-16-13', holder: 'Ada Lovelace' };
const ACH = {
  scheme: 'us_ach',
  account_number: '000123456789',
  routing_number: '021000021',
  holder: 'Ada Lovelace',
  account_type: 'savings',
};

const FULL = {
  name: 'Ada Lovelace Ltd',
  address: '12 St James Square, London',
  addresses: [
    { label: 'Euro account', requisites: SEPA },
    { label: 'Wire', requisites: SWIFT, details: 'Reference the invoice number.' },
    { label: 'UK', requisites: UK, is_primary: true },
    { label: 'US', requisites: ACH },
    { label: 'Wallet', address: '0x52908400098527886E0F7030069857D2E4169EE7', chain: 'evm', network: 'base' },
  ],
  compliance: 'kyc-passed',
  country: 'GB',
  email: 'ada@example.com',
  identity_id: randomUUID(),
  kind: 'company',
  note: 'Pays on time.',
  phone: '+44 20 7946 0000',
  reg_number: '01234567',
  save_to_book: true,
  tags: ['vip', 'uk'],
  tax_id: 'GB123456789',
  whitelisted: true,
};

describe('success', () => {
  it('creates a contact with every field and one address per requisites scheme, normalised', async () => {
    const res = await post(FULL);
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      name: FULL.name,
      address: FULL.address,
      compliance: 'kyc-passed',
      country: 'GB',
      email: 'ada@example.com',
      identity_id: FULL.identity_id,
      kind: 'company',
      note: 'Pays on time.',
      phone: FULL.phone,
      reg_number: '01234567',
      save_to_book: true,
      tags: ['vip', 'uk'],
      tax_id: 'GB123456789',
      whitelisted: true,
      tax_id_expected_format: '',
      collection_tone: null,
      last_paid_on: null,
      last_paid_usd: null,
      screening: null,
      whitelist_reset: false,
    });
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.addresses.map((a: { is_primary: boolean }) => a.is_primary)).toEqual([
      false,
      false,
      true,
      false,
      false,
    ]);
    expect(body.addresses.map((a: { requisites: unknown }) => a.requisites)).toEqual([
      { scheme: 'sepa', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX', holder: 'Ada Lovelace' },
      { ...SWIFT, account_number: '00123456789' },
      { ...UK, sort_code: '601613' },
      ACH,
      null,
    ]);
    expect(body.addresses[1]).toMatchObject({
      label: 'Wire',
      details: 'Reference the invoice number.',
      address: '',
      chain: null,
    });
    expect(body.addresses[4]).toMatchObject({
      address: FULL.addresses[4]?.address,
      chain: 'evm',
      network: 'base',
      details: '',
    });
  });

  it('stores the contact, save_to_book as saved_to_book, and the addresses in order', async () => {
    const { key: own } = await h.world({ scopes: ['contacts'] });
    const res = await post(FULL, { key: own.key });
    expect(res.statusCode).toBe(201);
    const [row] = await contactsOf(own.spaceId);
    expect(row).toMatchObject({
      id: res.json().id,
      saved_to_book: true,
      tags: ['vip', 'uk'],
      kind: 'company',
    });
    const addresses = await h.db
      .selectFrom('contact_addresses')
      .selectAll()
      .where('contact_id', '=', res.json().id)
      .orderBy('position')
      .execute();
    expect(addresses.map((a) => [a.position, a.label, a.space_id])).toEqual(
      FULL.addresses.map((a, index) => [index, a.label, own.spaceId]),
    );
    expect(addresses[0]?.requisites).toEqual({
      scheme: 'sepa',
      iban: 'DE89370400440532013000',
      bic: 'COBADEFFXXX',
      holder: 'Ada Lovelace',
    });
  });

  it('fills the defaults for a body with only a name', async () => {
    const res = await post({ name: 'Bo' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      id: expect.any(String),
      name: 'Bo',
      note: '',
      kind: 'person',
      whitelisted: false,
      compliance: '',
      addresses: [],
      address: '',
      country: '',
      email: '',
      phone: '',
      reg_number: '',
      tax_id: '',
      tax_id_expected_format: '',
      collection_tone: null,
      identity_id: null,
      last_paid_on: null,
      last_paid_usd: null,
      screening: null,
      tags: [],
      whitelist_reset: false,
      save_to_book: false,
    });
  });

  it('makes the first address primary when none is marked', async () => {
    const res = await post({ name: 'Cy', addresses: [{ address: 'a' }, { address: 'b' }] });
    expect(res.statusCode).toBe(201);
    expect(res.json().addresses.map((a: { is_primary: boolean }) => a.is_primary)).toEqual([true, false]);
  });

  it('ignores unknown fields, in the body and in requisites', async () => {
    const res = await post({
      name: 'Di',
      colour: 'blue',
      addresses: [{ requisites: { ...UK, extra: 'x' } }],
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).not.toHaveProperty('colour');
    expect(res.json().addresses[0].requisites).toEqual({ ...UK, sort_code: '601613' });
  });
});

const s = (length: number) => 'x'.repeat(length);
const email = (length: number) => `${'a'.repeat(length - '@example.com'.length)}@example.com`;

// Every string limit of ContactCreate, ContactAddressIn and the requisites we chose, as a
// body that puts one field at `length` characters, and where that field is reported.
const LIMITS: [string, number, (length: number) => unknown, (string | number)[]][] = [
  ['name', 120, (n) => ({ name: s(n) }), ['name']],
  ['address', 2000, (n) => ({ name: 'N', address: s(n) }), ['address']],
  ['compliance', 120, (n) => ({ name: 'N', compliance: s(n) }), ['compliance']],
  ['country', 80, (n) => ({ name: 'N', country: s(n) }), ['country']],
  ['email', 200, (n) => ({ name: 'N', email: email(n) }), ['email']],
  ['kind', 16, (n) => ({ name: 'N', kind: s(n) }), ['kind']],
  ['note', 2000, (n) => ({ name: 'N', note: s(n) }), ['note']],
  ['phone', 40, (n) => ({ name: 'N', phone: s(n) }), ['phone']],
  ['reg_number', 64, (n) => ({ name: 'N', reg_number: s(n) }), ['reg_number']],
  ['tax_id', 64, (n) => ({ name: 'N', tax_id: s(n) }), ['tax_id']],
  ['a tag', 40, (n) => ({ name: 'N', tags: [s(n)] }), ['tags', 0]],
  [
    'addresses.address',
    256,
    (n) => ({ name: 'N', addresses: [{ address: s(n) }] }),
    ['addresses', 0, 'address'],
  ],
  ['addresses.chain', 24, (n) => ({ name: 'N', addresses: [{ chain: s(n) }] }), ['addresses', 0, 'chain']],
  [
    'addresses.details',
    2000,
    (n) => ({ name: 'N', addresses: [{ details: s(n) }] }),
    ['addresses', 0, 'details'],
  ],
  ['addresses.label', 80, (n) => ({ name: 'N', addresses: [{ label: s(n) }] }), ['addresses', 0, 'label']],
  [
    'addresses.network',
    24,
    (n) => ({ name: 'N', addresses: [{ network: s(n) }] }),
    ['addresses', 0, 'network'],
  ],
  [
    'requisites.holder',
    200,
    (n) => ({ name: 'N', addresses: [{ requisites: { ...UK, holder: s(n) } }] }),
    ['addresses', 0, 'requisites', 'holder'],
  ],
  [
    'requisites.bank_name',
    200,
    (n) => ({ name: 'N', addresses: [{ requisites: { ...SWIFT, bank_name: s(n) } }] }),
    ['addresses', 0, 'requisites', 'bank_name'],
  ],
  [
    'requisites.bank_address',
    2000,
    (n) => ({ name: 'N', addresses: [{ requisites: { ...SWIFT, bank_address: s(n) } }] }),
    ['addresses', 0, 'requisites', 'bank_address'],
  ],
  [
    'swift account_number',
    34,
    (n) => ({ name: 'N', addresses: [{ requisites: { ...SWIFT, account_number: '1'.repeat(n) } }] }),
    ['addresses', 0, 'requisites', 'account_number'],
  ],
];

describe('validation', () => {
  it.each(LIMITS)('accepts %s at %i characters', async (_field, limit, body) => {
    const res = await post(body(limit));
    expect(res.statusCode, res.body).toBe(201);
  });

  it.each(LIMITS)(
    'refuses %s past %i characters as string_too_long at its path',
    async (_field, limit, body, loc) => {
      const res = await post(body(limit + 1));
      expect(res.statusCode).toBe(422);
      expect(res.json().detail).toContainEqual(
        expect.objectContaining({ loc: ['body', ...loc], type: 'string_too_long' }),
      );
    },
  );

  it.each([
    ['an empty name', { name: '' }, ['name'], 'string_too_short'],
    ['no name', { note: 'x' }, ['name'], 'missing'],
    ['an empty tag', { name: 'N', tags: [''] }, ['tags', 0], 'string_too_short'],
    ['a malformed email', { name: 'N', email: 'not-an-email' }, ['email'], 'value_error'],
    ['a non-uuid identity_id', { name: 'N', identity_id: 'abc' }, ['identity_id'], 'uuid_parsing'],
    ['a string for whitelisted', { name: 'N', whitelisted: 'yes' }, ['whitelisted'], 'bool_type'],
    [
      'an unknown scheme',
      { name: 'N', addresses: [{ requisites: { scheme: 'iban', holder: 'x' } }] },
      ['addresses', 0, 'requisites', 'scheme'],
      'enum',
    ],
    [
      'requisites without a scheme',
      { name: 'N', addresses: [{ requisites: { holder: 'x' } }] },
      ['addresses', 0, 'requisites', 'scheme'],
      'missing',
    ],
    [
      'sepa without an iban',
      { name: 'N', addresses: [{ requisites: { scheme: 'sepa', holder: 'x' } }] },
      ['addresses', 0, 'requisites', 'iban'],
      'missing',
    ],
    [
      'a 7-digit UK account number',
      { name: 'N', addresses: [{ requisites: { ...UK, account_number: '1234567' } }] },
      ['addresses', 0, 'requisites', 'account_number'],
      'string_pattern_mismatch',
    ],
    [
      'a sort code with spaces',
      { name: 'N', addresses: [{ requisites: { ...UK, sort_code: '60 16 13' } }] },
      ['addresses', 0, 'requisites', 'sort_code'],
      'string_pattern_mismatch',
    ],
    [
      'a 3-digit ACH account number',
      { name: 'N', addresses: [{ requisites: { ...ACH, account_number: '123' } }] },
      ['addresses', 0, 'requisites', 'account_number'],
      'string_pattern_mismatch',
    ],
    [
      'an 8-digit routing number',
      { name: 'N', addresses: [{ requisites: { ...ACH, routing_number: '02100002' } }] },
      ['addresses', 0, 'requisites', 'routing_number'],
      'string_pattern_mismatch',
    ],
    [
      'an unknown ACH account type',
      { name: 'N', addresses: [{ requisites: { ...ACH, account_type: 'brokerage' } }] },
      ['addresses', 0, 'requisites', 'account_type'],
      'enum',
    ],
  ])('refuses %s with one item at its path', async (_case, body, loc, type) => {
    const res = await post(body);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({ detail: [{ loc: ['body', ...loc], msg: expect.any(String), type }] });
  });

  it('accepts an empty email', async () => {
    const res = await post({ name: 'N', email: '' });
    expect(res.statusCode).toBe(201);
  });

  it('accepts 20 tags and refuses 21', async () => {
    const tags = Array.from({ length: 21 }, (_, index) => `tag-${index}`);
    expect((await post({ name: 'N', tags: tags.slice(0, 20) })).statusCode).toBe(201);
    const res = await post({ name: 'N', tags });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toEqual([{ loc: ['body', 'tags'], msg: expect.any(String), type: 'too_long' }]);
  });

  it('accepts 20 addresses and refuses 21', async () => {
    const addresses = Array.from({ length: 21 }, (_, index) => ({ address: `addr-${index}` }));
    const ok = await post({ name: 'N', addresses: addresses.slice(0, 20) });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().addresses).toHaveLength(20);
    const res = await post({ name: 'N', addresses });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toEqual([
      { loc: ['body', 'addresses'], msg: expect.any(String), type: 'too_long' },
    ]);
  });

  it.each([
    ['an IBAN with one digit changed', { ...SEPA, iban: 'DE89 3704 0044 0532 0130 01' }, 'iban'],
    ['a malformed BIC', { ...SEPA, bic: 'COBA1EFF' }, 'bic'],
    ['a malformed SWIFT BIC', { ...SWIFT, swift_bic: 'CHASUS3' }, 'swift_bic'],
    ['a routing number failing the ABA checksum', { ...ACH, routing_number: '021000022' }, 'routing_number'],
    ['a holder of spaces', { ...UK, holder: '   ' }, 'holder'],
  ])(
    'refuses %s as invalid_request naming the field, and writes nothing',
    async (_case, requisites, field) => {
      const { key: own } = await h.world({ scopes: ['contacts'] });
      const res = await post(
        { name: 'N', addresses: [{ address: 'first' }, { requisites }] },
        { key: own.key },
      );
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual({
        error: 'invalid_request',
        detail: expect.any(String),
        details: { field: `addresses.1.requisites.${field}` },
      });
      expect(await contactsOf(own.spaceId)).toHaveLength(0);
    },
  );

  it('refuses two primary addresses', async () => {
    const res = await post({ name: 'N', addresses: [{ is_primary: true }, { is_primary: true }] });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      error: 'invalid_request',
      details: { field: 'addresses.1.is_primary' },
    });
  });

  it('refuses a name of spaces', async () => {
    const res = await post({ name: '   ' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ error: 'invalid_request', details: { field: 'name' } });
  });
});

describe('idempotency', () => {
  it('answers a retry with the same key and body with the first answer, and creates one contact', async () => {
    const { key: own } = await h.world({ scopes: ['contacts'] });
    const idempotencyKey = randomUUID();
    const first = await post(FULL, { key: own.key, idempotencyKey });
    const second = await post(FULL, { key: own.key, idempotencyKey });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await contactsOf(own.spaceId)).toHaveLength(1);
  });

  it('refuses the same key with another body as idempotency_key_reused', async () => {
    const { key: own } = await h.world({ scopes: ['contacts'] });
    const idempotencyKey = randomUUID();
    expect((await post({ name: 'First' }, { key: own.key, idempotencyKey })).statusCode).toBe(201);
    const res = await post({ name: 'Second' }, { key: own.key, idempotencyKey });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toBe('idempotency_key_reused');
    expect(await contactsOf(own.spaceId)).toHaveLength(1);
  });

  it('creates two contacts for two posts without a key', async () => {
    const { key: own } = await h.world({ scopes: ['contacts'] });
    await post({ name: 'Twice' }, { key: own.key });
    await post({ name: 'Twice' }, { key: own.key });
    expect(await contactsOf(own.spaceId)).toHaveLength(2);
  });
});

describe('auth', () => {
  it('refuses a request without a key with 401', async () => {
    const res = await h.inject({ method: 'POST', url: URL, payload: { name: 'N' } });
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toBe('unauthorized');
  });

  it('refuses a key without the contacts scope with 403 missing_scope, and writes nothing', async () => {
    const { key: other } = await h.world({ scopes: ['accounts'] });
    const res = await post({ name: 'N' }, { key: other.key });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('missing_scope');
    expect(await contactsOf(other.spaceId)).toHaveLength(0);
  });

  it("files the contact in the key's own space only", async () => {
    const a = await h.world({ scopes: ['contacts'] });
    const b = await h.world({ scopes: ['contacts'] });
    const idempotencyKey = randomUUID();
    const created = await post({ name: 'Mine' }, { key: a.key.key, idempotencyKey });
    expect(created.statusCode).toBe(201);
    const row = await h.db
      .selectFrom('contacts')
      .select('space_id')
      .where('id', '=', created.json().id)
      .executeTakeFirstOrThrow();
    expect(row.space_id).toBe(a.spaceId);
    expect(await contactsOf(b.spaceId)).toHaveLength(0);
    // The same Idempotency-Key under another space's key is another request, not a replay.
    const other = await post({ name: 'Mine' }, { key: b.key.key, idempotencyKey });
    expect(other.statusCode).toBe(201);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(other.json().id).not.toBe(created.json().id);
  });
});
