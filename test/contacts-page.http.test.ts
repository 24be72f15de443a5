import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';

// The Contacts screen's new-contact form: each requisites scheme (sepa, swift, uk, us_ach) and a
// crypto address has its own labelled fields; a good form makes the contact with that address,
// and a bad one is answered in place, its message beside the field at fault.

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

const cookie = (token: string) => ({ cookie: `tb_session=${token}` });

async function book() {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner);
  return { owner, spaceId, path: `/app/books/${spaceId}/contacts` };
}

function post(owner: User, path: string, fields: Record<string, string>) {
  return h.inject({
    method: 'POST',
    url: path,
    headers: { ...cookie(owner.token), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: owner.csrf, ...fields }).toString(),
  });
}

/** The error shown beside the field named `name`, as the page wrote it. */
function errorBeside(body: string, name: string): string | undefined {
  const id = `field-${name}-error`;
  const match = new RegExp(`id="${id.replaceAll('.', '\\.')}">([^<]*)<`).exec(body);
  return match?.[1];
}

const R = 'addresses.0.requisites';

const GOOD: Record<string, { fields: Record<string, string>; requisites: Record<string, unknown> | null }> = {
  sepa: {
    fields: { [`${R}.iban`]: 'DE89 3704 0044 0532 0130 00', [`${R}.holder`]: 'Anna Schmidt' },
    requisites: { scheme: 'sepa', iban: 'DE89370400440532013000', holder: 'Anna Schmidt' },
  },
  swift: {
    fields: {
      [`${R}.account_number`]: '1234 5678 90',
      [`${R}.swift_bic`]: 'DEUTDEFF',
      [`${R}.holder`]: 'Acme Ltd',
      [`${R}.bank_name`]: 'Deutsche Bank',
    },
    requisites: {
      scheme: 'swift',
      account_number: '1234567890',
      swift_bic: 'DEUTDEFF',
      bank_name: 'Deutsche Bank',
    },
  },
  uk: {
    fields: { [`${R}.account_number`]: '12345678', [`${R}.sort_code`]: '12-34-56', [`${R}.holder`]: 'Bob' },
    requisites: { scheme: 'uk', account_number: '12345678', sort_code: '123456', holder: 'Bob' },
  },
  us_ach: {
    fields: {
      [`${R}.account_number`]: '000123456789',
      [`${R}.routing_number`]: '021000021',
      [`${R}.holder`]: 'Carol',
      [`${R}.account_type`]: 'savings',
    },
    requisites: { scheme: 'us_ach', routing_number: '021000021', account_type: 'savings' },
  },
  crypto: {
    fields: { 'addresses.0.address': `0x${'ab'.repeat(20)}`, 'addresses.0.network': 'base' },
    requisites: null,
  },
};

describe('Contacts form: requisites beyond SEPA', () => {
  it('shows each scheme’s own labelled fields when it is chosen', async () => {
    const { owner, path } = await book();
    const expected: Record<string, string[]> = {
      sepa: ['IBAN', 'BIC (optional)', 'Account holder'],
      swift: ['Account number or IBAN', 'SWIFT/BIC', 'Bank name (optional)', 'Bank address (optional)'],
      uk: ['Account number', 'Sort code', 'Account holder'],
      us_ach: ['Account number', 'Routing number', 'Account type'],
      crypto: ['Wallet address', 'Network', 'Chain (optional)'],
    };
    for (const [scheme, labels] of Object.entries(expected)) {
      const page = await h.inject({
        method: 'GET',
        url: `${path}?scheme=${scheme}`,
        headers: cookie(owner.token),
      });
      expect(page.statusCode).toBe(200);
      for (const label of labels)
        expect(page.body, `${scheme}: ${label}`).toMatch(
          new RegExp(`<label for="field-[^"]+">${label.replace(/[()]/g, '\\$&')}</label>`),
        );
      if (scheme !== 'crypto') expect(page.body).toContain(`name="${R}.scheme" value="${scheme}"`);
    }
    const none = await h.inject({ method: 'GET', url: path, headers: cookie(owner.token) });
    expect(none.body).not.toContain(`${R}.scheme`);
    expect(
      (await h.inject({ method: 'GET', url: `${path}?scheme=bitcoin`, headers: cookie(owner.token) }))
        .statusCode,
    ).toBe(400);
  });

  it('makes a contact with the chosen scheme’s requisites (and a wallet), normalised as the API does', async () => {
    const { owner, spaceId, path } = await book();
    for (const [scheme, good] of Object.entries(GOOD)) {
      const fields: Record<string, string> = { name: `Contact ${scheme}`, ...good.fields };
      if (scheme !== 'crypto') fields[`${R}.scheme`] = scheme;
      const res = await post(owner, path, fields);
      expect(res.statusCode, `${scheme}: ${res.body.slice(0, 300)}`).toBe(303);
    }
    const listed = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${spaceId}/contacts`,
      session: owner.token,
    });
    const contacts = listed.json().items as { name: string; addresses: Record<string, unknown>[] }[];
    for (const [scheme, good] of Object.entries(GOOD)) {
      const contact = contacts.find((item) => item.name === `Contact ${scheme}`)!;
      expect(contact.addresses).toHaveLength(1);
      if (good.requisites) expect(contact.addresses[0]!.requisites).toMatchObject(good.requisites);
      else
        expect(contact.addresses[0]).toMatchObject({
          address: `0x${'ab'.repeat(20)}`,
          network: 'base',
          requisites: null,
        });
    }
    const page = await h.inject({ method: 'GET', url: path, headers: cookie(owner.token) });
    expect(page.body).toContain('US_ACH 000123456789');
    expect(page.body).toContain(`0x${'ab'.repeat(20)} (Base)`);
  });

  it('answers a bad field of each scheme in place, beside that field, keeping the scheme and what was typed', async () => {
    const { owner, spaceId, path } = await book();
    const cases: [string, Record<string, string>, string][] = [
      ['sepa', { ...GOOD.sepa!.fields, [`${R}.iban`]: 'DE89 3704 0044 0532 0130 01' }, `${R}.iban`],
      ['swift', { ...GOOD.swift!.fields, [`${R}.swift_bic`]: 'DEU' }, `${R}.swift_bic`],
      ['uk', { ...GOOD.uk!.fields, [`${R}.sort_code`]: '12-34' }, `${R}.sort_code`],
      ['us_ach', { ...GOOD.us_ach!.fields, [`${R}.routing_number`]: '021000022' }, `${R}.routing_number`],
      [
        'us_ach',
        { [`${R}.account_number`]: '000123456789', [`${R}.holder`]: 'Carol' },
        `${R}.routing_number`,
      ],
      [
        'crypto',
        { 'addresses.0.network': 'x'.repeat(30), 'addresses.0.address': '0xabc' },
        'addresses.0.network',
      ],
    ];
    for (const [scheme, fields, field] of cases) {
      const body: Record<string, string> = { name: 'Refused', ...fields };
      if (scheme !== 'crypto') body[`${R}.scheme`] = scheme;
      const res = await post(owner, path, body);
      expect(res.statusCode, `${scheme} ${field}`).toBe(422);
      const message = errorBeside(res.body, field);
      expect(message, `${scheme}: message beside ${field}\n${res.body.slice(0, 200)}`).toBeTruthy();
      expect(res.body).toContain(`id="field-${field}"`);
      expect(res.body).toMatch(
        new RegExp(`id="field-${field.replaceAll('.', '\\.')}"[^>]*aria-invalid="true"`),
      );
      expect(res.body).toContain('value="Refused"');
      if (scheme !== 'crypto') expect(res.body).toContain(`name="${R}.scheme" value="${scheme}"`);
      else expect(res.body).toContain('Wallet address');
    }
    const listed = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${spaceId}/contacts`,
      session: owner.token,
    });
    expect(listed.json().items).toEqual([]);
    // A pattern the schema refuses reads as a sentence, not as the pattern itself.
    const sorted = await post(owner, path, {
      name: 'x',
      [`${R}.scheme`]: 'uk',
      ...GOOD.uk!.fields,
      [`${R}.sort_code`]: '12-34',
    });
    expect(errorBeside(sorted.body, `${R}.sort_code`)).toBe('This is not in the expected form.');
  });

  it('gives a viewer no form, and refuses their post', async () => {
    const { owner, spaceId, path } = await book();
    const viewer = await h.signup('Viewer');
    await h.addMember(owner, spaceId, viewer, 'viewer');
    const page = await h.inject({ method: 'GET', url: `${path}?scheme=uk`, headers: cookie(viewer.token) });
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('New contact');
    expect(page.body).not.toContain('Sort code');
    const res = await post(viewer, path, { name: 'Nope', [`${R}.scheme`]: 'uk', ...GOOD.uk!.fields });
    expect(res.statusCode).toBe(403);
  });
});
