import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';

// Bank requisites on accounts: set when an account is made (integration and app) or changed by
// PATCH /app/api/spaces/{id}/accounts/{account_id}, checked by the one set of rules for bank
// details (IBAN mod-97, BIC shape, sort code, ABA routing), on bank accounts only.

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

const SEPA = {
  scheme: 'sepa',
  iban: 'de89 3704 0044 0532 0130 00',
  bic: 'cobadeffxxx',
  holder: 'Nordlicht Studio GmbH',
};

async function book() {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner);
  const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Main bank (EUR)', currency: 'EUR' });
  return { owner, spaceId, accountId: account.id };
}

const patch = (user: User, spaceId: string, accountId: string, payload: Record<string, unknown>) =>
  h.inject({
    method: 'PATCH',
    url: `/app/api/spaces/${spaceId}/accounts/${accountId}`,
    session: user.token,
    payload,
  });

describe('bank requisites on accounts', () => {
  it('stores SEPA requisites compact and upper-cased, renames the account, and removes them with null', async () => {
    const b = await book();
    const res = await patch(b.owner, b.spaceId, b.accountId, { name: 'Sparkasse', requisites: SEPA });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      name: 'Sparkasse',
      requisites: {
        scheme: 'sepa',
        iban: 'DE89370400440532013000',
        bic: 'COBADEFFXXX',
        holder: 'Nordlicht Studio GmbH',
      },
    });
    const listed = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${b.spaceId}/accounts`,
      session: b.owner.token,
    });
    expect(listed.json().items.find((a: { id: string }) => a.id === b.accountId).requisites.iban).toBe(
      'DE89370400440532013000',
    );
    const cleared = await patch(b.owner, b.spaceId, b.accountId, { requisites: null });
    expect(cleared.json().requisites).toBeNull();
    expect(cleared.json().name).toBe('Sparkasse');
  });

  it.each([
    [{ ...SEPA, iban: 'DE89 3704 0044 0532 0130 01' }, 'requisites.iban', /mod-97/],
    [{ ...SEPA, bic: 'COBA1EFF' }, 'requisites.bic', /BIC/],
    [
      { scheme: 'uk', account_number: '12345678', sort_code: '12-34-56', holder: '   ' },
      'requisites.holder',
      /spaces/,
    ],
    [
      {
        scheme: 'us_ach',
        account_number: '000123456789',
        routing_number: '011000016',
        holder: 'X',
        account_type: 'checking',
      },
      'requisites.routing_number',
      /ABA/,
    ],
  ])('refuses %j with 422 naming the field, and keeps what was there', async (requisites, field, message) => {
    const b = await book();
    await patch(b.owner, b.spaceId, b.accountId, { requisites: SEPA });
    const res = await patch(b.owner, b.spaceId, b.accountId, { requisites });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ error: 'invalid_request', details: { field } });
    expect(res.json().detail).toMatch(message);
    const read = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${b.spaceId}/accounts`,
      session: b.owner.token,
    });
    expect(read.json().items[0].requisites.iban).toBe('DE89370400440532013000');
  });

  it('refuses requisites on an account that is not a bank, a missing scheme by schema, and a viewer', async () => {
    const b = await book();
    const wallet = await h.makeWallet(b.spaceId);
    const off = await patch(b.owner, b.spaceId, wallet.id, { requisites: SEPA });
    expect(off.statusCode).toBe(422);
    expect(off.json()).toMatchObject({ error: 'invalid_request', details: { field: 'requisites' } });
    const shapeless = await patch(b.owner, b.spaceId, b.accountId, { requisites: { iban: SEPA.iban } });
    expect(shapeless.statusCode).toBe(422);
    expect(shapeless.json().detail[0].loc).toEqual(['body', 'requisites', 'scheme']);
    const viewer = await h.signup('Viewer');
    await h.addMember(b.owner, b.spaceId, viewer, 'viewer');
    expect((await patch(viewer, b.spaceId, b.accountId, { name: 'Mine' })).statusCode).toBe(403);
    const stranger = await h.signup('Stranger');
    expect((await patch(stranger, b.spaceId, b.accountId, { name: 'Mine' })).statusCode).toBe(404);
    const other = await book();
    expect((await patch(b.owner, b.spaceId, other.accountId, { name: 'Theirs' })).statusCode).toBe(404);
  });

  it('takes requisites when an integration makes an account', async () => {
    const b = await book();
    const key = await h.issueKey(b.owner, b.spaceId, { scopes: ['accounts'] });
    const res = await h.inject({
      method: 'POST',
      url: '/integration/accounts',
      key: key.key,
      payload: {
        kind: 'bank',
        name: 'Barclays',
        currency: 'GBP',
        requisites: {
          scheme: 'uk',
          account_number: '31926819',
          sort_code: '20-00-00',
          holder: 'Nordlicht Ltd',
        },
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().requisites).toEqual({
      scheme: 'uk',
      account_number: '31926819',
      sort_code: '200000',
      holder: 'Nordlicht Ltd',
    });
  });

  it("the account's page shows the chosen scheme's fields only, and a refused save comes back with them", async () => {
    const b = await book();
    const page = (query = '') =>
      h.inject({
        method: 'GET',
        url: `/app/books/${b.spaceId}/accounts/${b.accountId}${query}`,
        headers: { cookie: `tb_session=${b.owner.token}` },
      });
    const field = (name: string) => `id="field-requisites.${name}"`;
    const none = await page();
    expect(none.statusCode).toBe(200);
    expect(none.body).toContain('<div id="scheme-fields" data-scheme></div>');
    expect(none.body).not.toContain(field('holder'));
    const uk = await page('?requisites.scheme=uk');
    for (const name of ['holder', 'account_number', 'sort_code']) expect(uk.body).toContain(field(name));
    for (const name of ['iban', 'bic', 'routing_number', 'swift_bic'])
      expect(uk.body).not.toContain(field(name));
    expect((await patch(b.owner, b.spaceId, b.accountId, { requisites: SEPA })).statusCode).toBe(200);
    const sepa = await page();
    for (const name of ['holder', 'iban', 'bic']) expect(sepa.body).toContain(field(name));
    for (const name of ['account_number', 'sort_code', 'routing_number'])
      expect(sepa.body).not.toContain(field(name));
    // Without script the scheme changes on save: the refusal shows the newly chosen scheme's fields.
    const refused = await h.inject({
      method: 'POST',
      url: `/app/books/${b.spaceId}/accounts/${b.accountId}`,
      headers: {
        cookie: `tb_session=${b.owner.token}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams({
        _csrf: b.owner.csrf,
        name: 'Main bank (EUR)',
        'requisites.scheme': 'us_ach',
        'requisites.holder': 'Nordlicht Inc',
      }).toString(),
    });
    expect(refused.statusCode).toBe(422);
    for (const name of ['holder', 'account_number', 'routing_number', 'account_type'])
      expect(refused.body).toContain(field(name));
    expect(refused.body).not.toContain(field('iban'));
  });
});
