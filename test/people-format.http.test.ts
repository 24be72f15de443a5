import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';

// Words and numbers for people: a book's time zone and locale (Book settings, defaulting from
// the creating browser), and every page writing moments, dates and amounts through them.

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

const page = (user: User, url: string) =>
  h.inject({ method: 'GET', url, headers: { cookie: `tb_session=${user.token}` } });

function postForm(
  user: User,
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  return h.inject({
    method: 'POST',
    url,
    headers: {
      cookie: `tb_session=${user.token}`,
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    },
    payload: new URLSearchParams({ _csrf: user.csrf, ...fields }).toString(),
  });
}

async function readSpace(user: User, spaceId: string) {
  return (await h.inject({ method: 'GET', url: `/app/api/spaces/${spaceId}`, session: user.token })).json();
}

describe('a new book’s time zone and locale', () => {
  it('takes its locale from the creating browser’s Accept-Language and its zone from the form', async () => {
    const owner = await h.signup('Owner');
    const made = await postForm(
      owner,
      '/app/books',
      { name: 'Berlin Bakery', base_currency: 'EUR', time_zone: 'Europe/Berlin' },
      { 'accept-language': 'xx-YY;q=1, de-DE;q=0.9, en;q=0.5' },
    );
    expect(made.statusCode, made.body).toBe(303);
    const spaceId = String(made.headers.location).split('/').at(-1) as string;
    expect(await readSpace(owner, spaceId)).toMatchObject({ time_zone: 'Europe/Berlin', locale: 'de-DE' });
  });

  it('starts in UTC and English without a zone or a language, through the app API too', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    expect(await readSpace(owner, spaceId)).toMatchObject({ time_zone: 'UTC', locale: 'en' });
    const refused = await h.inject({
      method: 'POST',
      url: '/app/api/spaces',
      session: owner.token,
      payload: { name: 'Moon', base_currency: 'USD', time_zone: 'Moon/Tranquility' },
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toMatchObject({ error: 'invalid_request', details: { field: 'time_zone' } });
  });
});

describe('Book settings: Dates and numbers', () => {
  it('changes the zone and locale, and refuses an unknown zone in place beside its field', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const url = `/app/books/${spaceId}/settings/format`;
    const refused = await postForm(owner, url, { time_zone: 'Atlantis/Capital', locale: 'ja-JP' });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toMatch(/id="field-time_zone-error">[^<]*Atlantis\/Capital is not a time zone name/);
    expect(refused.body).toContain('value="Atlantis/Capital"');
    const saved = await postForm(owner, url, { time_zone: 'Asia/Tokyo', locale: 'ja-jp' });
    expect(saved.statusCode, saved.body).toBe(303);
    expect(await readSpace(owner, spaceId)).toMatchObject({ time_zone: 'Asia/Tokyo', locale: 'ja-JP' });
    const settings = await page(owner, `/app/books/${spaceId}/settings`);
    expect(settings.body).toContain('2026/03/02 3:30');
  });
});

describe('a book in Asia/Tokyo writing ja-JP', () => {
  it('shows moments in Tokyo time, dates alone as their day, and JPY without decimals', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner, {
      base_currency: 'JPY',
      time_zone: 'Asia/Tokyo',
      locale: 'ja-JP',
    });
    const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Bank', currency: 'JPY' });
    const made = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/invoices`,
      session: owner.token,
      payload: {
        account_id: account.id,
        client_name: 'Tanaka KK',
        due_on: '2099-06-30',
        line_items: [{ description: 'Design', unit_price: '123456', quantity: '1' }],
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    const createdAt = new Date(made.json().created_at as string);
    const list = await page(owner, `/app/books/${spaceId}/invoices`);
    expect(list.statusCode).toBe(200);
    // The moment the invoice was made, in Tokyo (UTC+9, no summer time) as ja-JP writes it.
    const tokyo = new Date(createdAt.getTime() + 9 * 3600_000).toISOString();
    const written = `${tokyo.slice(0, 4)}/${tokyo.slice(5, 7)}/${tokyo.slice(8, 10)} ${Number(tokyo.slice(11, 13))}:${tokyo.slice(14, 16)}`;
    expect(list.body).toContain(`>${written}</time>`);
    expect(list.body).toContain('>2099/06/30</time>');
    expect(list.body).toContain('123,456 JPY');
    expect(list.body).not.toContain('123,456.00');
  });
});
