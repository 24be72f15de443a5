import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeAuthContract } from './auth-contract.ts';
import { createHarness, type Harness, type Key } from './harness.ts';

describeAuthContract({
  method: 'POST',
  url: '/integration/accounts',
  scope: 'accounts',
  payload: () => ({ kind: 'bank', name: 'Main', currency: 'EUR' }),
  okStatus: 201,
});
describeAuthContract({ method: 'GET', url: '/integration/accounts', scope: 'accounts', okStatus: 200 });

let h: Harness;
let key: Key;
beforeAll(async () => {
  h = await createHarness();
  ({ key } = await h.world({ scopes: ['accounts'] }));
});
afterAll(() => h.close());

const create = (payload: unknown, headers: Record<string, string> = {}, k: Key = key) =>
  h.inject({ method: 'POST', url: '/integration/accounts', key: k.key, payload: payload as object, headers });

describe('POST /integration/accounts: success', () => {
  it('creates an account with every field and answers AccountOut with eight-decimal amounts', async () => {
    const res = await create({
      kind: 'crypto',
      name: 'Treasury',
      currency: 'usdc',
      address: '0x1111111111111111111111111111111111111111',
      network: 'base',
      color: '#1a7f5a',
      details: 'cold wallet',
      external_signer: true,
      opening_acquired_on: '2026-01-31',
      opening_balance: '-12.5',
      opening_cost: 99.99,
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      kind: 'crypto',
      name: 'Treasury',
      currency: 'USDC',
      chain: 'evm',
      network: 'base',
      address: '0x1111111111111111111111111111111111111111',
      color: '#1a7f5a',
      details: 'cold wallet',
      external_signer: true,
      opening_acquired_on: '2026-01-31',
      opening_balance: '-12.50000000',
      opening_cost: '99.99000000',
      balance: '-12.50000000',
    });
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(body.created_at).toISOString()).toBe(body.created_at);
  });

  it('fills defaults for a minimal body', async () => {
    const res = await create({ kind: 'cash', name: 'Till', currency: 'EUR' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      address: null,
      chain: null,
      network: null,
      color: null,
      details: '',
      external_signer: false,
      opening_acquired_on: null,
      opening_balance: '0.00000000',
      opening_cost: null,
      balance: '0.00000000',
    });
  });

  it('keeps an opening balance at the ±1e16 edges exactly, even past float precision', async () => {
    for (const [sent, stored] of [
      ['10000000000000000', '10000000000000000.00000000'],
      ['-10000000000000000', '-10000000000000000.00000000'],
      ['9999999999999999.99999999', '9999999999999999.99999999'],
    ]) {
      const res = await create({ kind: 'bank', name: 'Edge', currency: 'USD', opening_balance: sent });
      expect(res.statusCode, sent).toBe(201);
      expect(res.json().opening_balance).toBe(stored);
    }
    const raw = await h.inject({
      method: 'POST',
      url: '/integration/accounts',
      key: key.key,
      headers: { 'content-type': 'application/json' },
      payload: '{"kind":"bank","name":"Raw","currency":"USD","opening_balance":1234567890123.12345678}',
    });
    expect(raw.statusCode).toBe(201);
    expect(raw.json().opening_balance).toBe('1234567890123.12345678');
  });
});

describe('POST /integration/accounts: validation', () => {
  const base = { kind: 'bank', name: 'Main', currency: 'USD' };
  const refused = async (payload: unknown, loc: (string | number)[], type: string) => {
    const res = await create(payload);
    expect(res.statusCode, res.body).toBe(422);
    const items = res.json().detail as { loc: unknown[]; type: string }[];
    expect(items).toContainEqual(expect.objectContaining({ loc, type }));
  };

  it.each([
    ['name', 120],
    ['details', 2000],
  ])('accepts %s at %i characters and refuses one more', async (field, max) => {
    expect((await create({ ...base, [field]: 'x'.repeat(max) })).statusCode).toBe(201);
    await refused({ ...base, [field]: 'x'.repeat(max + 1) }, ['body', field], 'string_too_long');
  });

  it.each([
    ['address', 128, 'bank'],
    ['chain', 24, 'bank'],
    ['network', 24, 'bank'],
  ])('accepts %s at %i characters on a non-crypto account and refuses one more', async (field, max, kind) => {
    expect((await create({ ...base, kind, [field]: 'x'.repeat(max) })).statusCode).toBe(201);
    await refused({ ...base, kind, [field]: 'x'.repeat(max + 1) }, ['body', field], 'string_too_long');
  });

  it('checks currency length 2 to 12 and color up to 9', async () => {
    expect((await create({ ...base, currency: 'AB' })).statusCode).toBe(201);
    expect((await create({ ...base, currency: 'ABCDEFGHIJKL' })).statusCode).toBe(201);
    await refused({ ...base, currency: 'A' }, ['body', 'currency'], 'string_too_short');
    await refused({ ...base, currency: 'ABCDEFGHIJKLM' }, ['body', 'currency'], 'string_too_long');
    expect((await create({ ...base, color: '#11223344' })).statusCode).toBe(201);
    await refused({ ...base, color: '#112233445' }, ['body', 'color'], 'string_too_long');
  });

  it('refuses an empty name, a missing kind and an unknown kind, all in one answer', async () => {
    const res = await create({ name: '', currency: 'USD', kind: undefined });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ['body', 'name'], type: 'string_too_short' }),
        expect.objectContaining({ loc: ['body', 'kind'], type: 'missing' }),
      ]),
    );
    await refused({ ...base, kind: 'vault' }, ['body', 'kind'], 'enum');
  });

  it.each([
    ['1e3', 'decimal_parsing'],
    ['--1', 'decimal_parsing'],
    ['.', 'decimal_parsing'],
    ['+', 'decimal_parsing'],
    ['1.2.3', 'decimal_parsing'],
    ['', 'decimal_parsing'],
    ['0.123456789', 'decimal_max_places'],
    ['10000000000000000.00000001', 'less_than_equal'],
    ['-10000000000000000.00000001', 'less_than_equal'],
    [true, 'decimal_type'],
    [null, 'decimal_type'],
    [{ v: 1 }, 'decimal_type'],
    [[1], 'decimal_type'],
  ])('refuses opening_balance %j with type %s', async (value, type) => {
    await refused({ ...base, opening_balance: value }, ['body', 'opening_balance'], type);
  });

  it.each([
    [0, 'greater_than'],
    ['-1', 'greater_than'],
    ['10000000000000001', 'less_than_equal'],
  ])('refuses opening_cost %j', async (value, type) => {
    await refused({ ...base, opening_cost: value }, ['body', 'opening_cost'], type);
  });

  it('refuses a bad date, a boolean given as a string, and a crypto account with a bad address or network', async () => {
    await refused(
      { ...base, opening_acquired_on: '2026-02-30x' },
      ['body', 'opening_acquired_on'],
      'date_parsing',
    );
    await refused({ ...base, external_signer: 'true' }, ['body', 'external_signer'], 'bool_type');
    const badAddress = await create({ ...base, kind: 'crypto', currency: 'USDC', address: '0x12' });
    expect(badAddress.statusCode).toBe(422);
    expect(badAddress.json()).toMatchObject({ error: 'invalid_request', details: { field: 'address' } });
    const badNetwork = await create({ ...base, kind: 'crypto', currency: 'USDC', network: 'solana' });
    expect(badNetwork.json()).toMatchObject({ error: 'invalid_request', details: { field: 'network' } });
  });

  it('answers malformed JSON, a wrong media type and an oversized body with the error shapes', async () => {
    const broken = await h.inject({
      method: 'POST',
      url: '/integration/accounts',
      key: key.key,
      headers: { 'content-type': 'application/json' },
      payload: '{"kind": "bank",',
    });
    expect(broken.statusCode).toBe(422);
    expect(broken.json().detail[0].type).toBe('json_invalid');
    const text = await h.inject({
      method: 'POST',
      url: '/integration/accounts',
      key: key.key,
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().error).toBe('unsupported_media_type');
    const huge = await create({ ...base, details: 'x'.repeat(1024 * 1024 + 10) });
    expect(huge.statusCode).toBe(413);
    expect(huge.json().error).toBe('payload_too_large');
  });
});

describe('POST /integration/accounts: idempotency', () => {
  const body = { kind: 'bank', name: 'Idem', currency: 'USD' };
  const countNamed = async (name: string) =>
    (
      await h.db
        .selectFrom('accounts')
        .select('id')
        .where('space_id', '=', key.spaceId)
        .where('name', '=', name)
        .execute()
    ).length;

  it('replays the first answer byte for byte for the same key and body', async () => {
    const idem = { 'idempotency-key': `idem-${Math.random()}` };
    const first = await create({ ...body, name: 'Replay' }, idem);
    const second = await create({ name: 'Replay', currency: 'USD', kind: 'bank' }, idem);
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await countNamed('Replay')).toBe(1);
  });

  it('refuses the same key with another body with 422 idempotency_key_reused', async () => {
    const idem = { 'idempotency-key': `idem-${Math.random()}` };
    expect((await create({ ...body, name: 'Reuse A' }, idem)).statusCode).toBe(201);
    const res = await create({ ...body, name: 'Reuse B' }, idem);
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toBe('idempotency_key_reused');
    expect(await countNamed('Reuse B')).toBe(0);
  });

  it('replays a refusal too: a 422 of the service is remembered', async () => {
    const idem = { 'idempotency-key': `idem-${Math.random()}` };
    const first = await create({ ...body, kind: 'crypto', address: 'nope' }, idem);
    const second = await create({ ...body, kind: 'crypto', address: 'nope' }, idem);
    expect(first.statusCode).toBe(422);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
  });

  it('executes once when ten requests with one key race: the rest are replays or 409s', async () => {
    const idem = { 'idempotency-key': `race-${Math.random()}` };
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => create({ ...body, name: 'Race' }, idem)),
    );
    const statuses = answers.map((res) => res.statusCode);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    const fresh = answers.filter(
      (res) => res.statusCode === 201 && res.headers['idempotent-replayed'] === undefined,
    );
    expect(fresh).toHaveLength(1);
    for (const res of answers.filter((r) => r.statusCode === 409))
      expect(res.json().error).toBe('idempotency_in_progress');
    expect(await countNamed('Race')).toBe(1);
  });

  it('scopes keys per integration key: another key may use the same Idempotency-Key', async () => {
    const idem = { 'idempotency-key': `shared-${Math.random()}` };
    const other = await h.world({ scopes: ['accounts'] });
    expect((await create({ ...body, name: 'Scoped' }, idem)).statusCode).toBe(201);
    const res = await create({ ...body, name: 'Scoped' }, idem, other.key);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(res.statusCode).toBe(201);
  });

  it('refuses a malformed Idempotency-Key', async () => {
    const res = await create(body, { 'idempotency-key': 'has space' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ error: 'invalid_request', details: { header: 'Idempotency-Key' } });
    const long = await create(body, { 'idempotency-key': 'x'.repeat(256) });
    expect(long.statusCode).toBe(422);
  });
});

describe('GET /integration/accounts', () => {
  it('lists only the calling space, in creation order, page by page', async () => {
    const mine = await h.world({ scopes: ['accounts'] });
    const theirs = await h.world({ scopes: ['accounts'] });
    for (const name of ['A', 'B', 'C']) {
      await create({ kind: 'bank', name, currency: 'USD' }, {}, mine.key);
    }
    await create({ kind: 'bank', name: 'Theirs', currency: 'USD' }, {}, theirs.key);
    const list = (query: string) =>
      h.inject({ method: 'GET', url: `/integration/accounts${query}`, key: mine.key.key });
    const all = (await list('')).json();
    expect(all.items.map((item: { name: string }) => item.name)).toEqual(['A', 'B', 'C']);
    expect(all.has_more).toBe(false);
    const first = (await list('?limit=2')).json();
    expect(first.items.map((item: { name: string }) => item.name)).toEqual(['A', 'B']);
    expect(first.has_more).toBe(true);
    const second = (await list(`?limit=2&starting_after=${first.items[1].id}`)).json();
    expect(second.items.map((item: { name: string }) => item.name)).toEqual(['C']);
    expect((await list('?limit=0')).statusCode).toBe(422);
    expect((await list('?limit=501')).statusCode).toBe(422);
    const theirId = (
      await h.inject({ method: 'GET', url: '/integration/accounts', key: theirs.key.key })
    ).json().items[0].id;
    expect((await list(`?starting_after=${theirId}`)).statusCode).toBe(404);
  });
});

describe('POST /integration/accounts: dates PostgreSQL cannot store', () => {
  it.each(['0000-01-01', '2026-02-29', '2026-04-31'])(
    'refuses opening_acquired_on %s with 422, never a 500',
    async (date) => {
      const res = await create({ kind: 'bank', name: 'Dated', currency: 'USD', opening_acquired_on: date });
      expect(res.statusCode).toBe(422);
      expect(res.json().detail[0]).toMatchObject({
        loc: ['body', 'opening_acquired_on'],
        type: 'date_parsing',
      });
    },
  );
});
