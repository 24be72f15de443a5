import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.ts';

// The web app's shell over HTTP: pages answer with the security headers, the session cookie
// opens them, forms need the CSRF token, and a book is visible only to its members.

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => h.close());

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function cookieOf(res: { headers: Record<string, unknown> }): string {
  const set = res.headers['set-cookie'];
  const first = Array.isArray(set) ? set[0] : set;
  return String(first).split(';')[0]!;
}

describe('the shell', () => {
  it('sends / to /app and a visitor without a session to the login page', async () => {
    const root = await h.inject({ method: 'GET', url: '/' });
    expect(root.statusCode).toBe(303);
    expect(root.headers.location).toBe('/app');
    const app = await h.inject({ method: 'GET', url: '/app/books' });
    expect(app.statusCode).toBe(303);
    expect(app.headers.location).toBe('/app/login?next=%2Fapp%2Fbooks');
  });

  it('signs up with a form, lands on Books with the cookie, and shows the security headers', async () => {
    const email = `web-${Date.now()}@example.com`;
    const res = await h.inject({
      method: 'POST',
      url: '/app/signup',
      headers: FORM,
      payload: form({ name: 'Web person', email, password: 'a long password' }),
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/app/books');
    const cookie = cookieOf(res);
    const books = await h.inject({ method: 'GET', url: '/app/books', headers: { cookie } });
    expect(books.statusCode).toBe(200);
    expect(books.body).toContain('No books yet');
    expect(books.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(books.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(books.headers['x-frame-options']).toBe('DENY');
  });
});

// Every page route of a book, with a body its form would send. Each runs the same contract.
const BOOK_GETS = [
  'settings',
  'members',
  'keys',
  'payment-requests',
  'accounts',
  'contacts',
  'clients',
  'sites',
  'notifications',
  'chats',
];
const UUID_A = '00000000-0000-4000-8000-000000000001';
const BOOK_POSTS: [string, Record<string, string>][] = [
  ['settings', { name: 'Renamed' }],
  ['settings/switches', { integration_enabled: 'true' }],
  ['members', { email: 'nobody@example.com', role: 'viewer' }],
  [`members/${UUID_A}`, { role: 'viewer' }],
  [`members/${UUID_A}/remove`, {}],
  ['keys', { name: 'k', scopes: 'payments' }],
  [`keys/${UUID_A}/revoke`, {}],
  ['payment-requests/pr_x/mark-paid', { amount: '1', reference: 'r' }],
  ['accounts', { kind: 'bank', name: 'A', currency: 'USD' }],
  [`accounts/${UUID_A}/prove`, {}],
  [`accounts/${UUID_A}/prove/signature`, { signature: '0x00' }],
  ['contacts', { name: 'C' }],
  ['clients/ref-1/contact', { contact_id: UUID_A }],
  ['sites', { origin: 'https://shop.example.com' }],
  [`sites/${UUID_A}/verify`, {}],
  [`sites/${UUID_A}/remove`, {}],
  ['notifications/read', {}],
  [`chats/${UUID_A}/answer`, { text: 'Hello' }],
  [`chats/invoices/${UUID_A}/payer-claim/confirm`, {}],
  [`chats/invoices/${UUID_A}/deferral/decline`, {}],
];

describe('every page route of a book', () => {
  let owner: Awaited<ReturnType<Harness['signup']>>;
  let stranger: Awaited<ReturnType<Harness['signup']>>;
  let viewer: Awaited<ReturnType<Harness['signup']>>;
  let bookId: string;
  const cookie = (user: { token: string }) => `tb_session=${user.token}`;

  beforeAll(async () => {
    owner = await h.signup('Owner');
    stranger = await h.signup('Stranger');
    viewer = await h.signup('Viewer');
    bookId = await h.createSpace(owner);
    await h.createSpace(stranger);
    await h.addMember(owner, bookId, viewer, 'viewer');
  });

  it('opens each screen for a member, with the security headers', async () => {
    for (const screen of BOOK_GETS) {
      const res = await h.inject({
        method: 'GET',
        url: `/app/books/${bookId}/${screen}`,
        headers: { cookie: cookie(owner) },
      });
      expect(res.statusCode, screen).toBe(200);
      expect(res.headers['content-security-policy'], screen).toContain("frame-ancestors 'none'");
    }
  });

  it('sends a visitor without a session to log in, for every screen and every write', async () => {
    for (const screen of BOOK_GETS) {
      const res = await h.inject({ method: 'GET', url: `/app/books/${bookId}/${screen}` });
      expect(res.statusCode, screen).toBe(303);
      expect(res.headers.location, screen).toBe(
        `/app/login?next=${encodeURIComponent(`/app/books/${bookId}/${screen}`)}`,
      );
    }
    for (const [path, fields] of BOOK_POSTS) {
      const res = await h.inject({
        method: 'POST',
        url: `/app/books/${bookId}/${path}`,
        headers: FORM,
        payload: form(fields),
      });
      expect(res.statusCode, path).toBe(303);
      expect(res.headers.location, path).toBe('/app/login');
    }
  });

  it('answers 404 for another person’s book, on every screen and every write, and changes nothing', async () => {
    for (const screen of BOOK_GETS) {
      const res = await h.inject({
        method: 'GET',
        url: `/app/books/${bookId}/${screen}`,
        headers: { cookie: cookie(stranger) },
      });
      expect(res.statusCode, screen).toBe(404);
      expect(res.body, screen).not.toContain('Test space');
    }
    for (const [path, fields] of BOOK_POSTS) {
      const res = await h.inject({
        method: 'POST',
        url: `/app/books/${bookId}/${path}`,
        headers: { ...FORM, cookie: cookie(stranger) },
        payload: form({ ...fields, _csrf: stranger.csrf }),
      });
      expect(res.statusCode, path).toBe(404);
    }
    const space = await h.inject({ method: 'GET', url: `/app/api/spaces/${bookId}`, session: owner.token });
    expect(space.json().name).toBe('Test space');
  });

  it('answers 404 for a book id that is not one', async () => {
    const res = await h.inject({
      method: 'GET',
      url: '/app/books/not-a-book/keys',
      headers: { cookie: cookie(owner) },
    });
    expect(res.statusCode).toBe(404);
  });

  it('refuses every write without the session’s CSRF token (403), even with the cookie', async () => {
    for (const [path, fields] of BOOK_POSTS) {
      for (const token of [undefined, 'csrf_wrong']) {
        const res = await h.inject({
          method: 'POST',
          url: `/app/books/${bookId}/${path}`,
          headers: { ...FORM, cookie: cookie(owner) },
          payload: form(token ? { ...fields, _csrf: token } : fields),
        });
        expect(res.statusCode, path).toBe(403);
      }
    }
  });

  it('refuses a form sent from another site', async () => {
    const res = await h.inject({
      method: 'POST',
      url: `/app/books/${bookId}/accounts`,
      headers: { ...FORM, cookie: cookie(owner), origin: 'https://evil.example' },
      payload: form({ _csrf: owner.csrf, kind: 'bank', name: 'A', currency: 'USD' }),
    });
    expect(res.statusCode).toBe(403);
  });

  it('refuses every write of a viewer (403) except marking their own notifications read', async () => {
    for (const [path, fields] of BOOK_POSTS) {
      const res = await h.inject({
        method: 'POST',
        url: `/app/books/${bookId}/${path}`,
        headers: { ...FORM, cookie: cookie(viewer) },
        payload: form({ ...fields, _csrf: viewer.csrf }),
      });
      expect(res.statusCode, path).toBe(path === 'notifications/read' ? 303 : 403);
    }
    const accounts = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${bookId}/accounts`,
      session: owner.token,
    });
    expect(accounts.json().items).toEqual([]);
  });

  it('shows a book name with markup as text on every screen', async () => {
    const evil = '<script>alert(1)</script>';
    const evilBook = await h.createSpace(owner, { name: evil });
    for (const screen of BOOK_GETS) {
      const res = await h.inject({
        method: 'GET',
        url: `/app/books/${evilBook}/${screen}`,
        headers: { cookie: cookie(owner) },
      });
      expect(res.body, screen).not.toContain(evil);
      expect(res.body, screen).toContain('&lt;script>alert(1)&lt;/script>');
    }
  });

  it('lists payment requests by cursor, 50 a page, newest first, in the app API and on the page', async () => {
    const { owner: seller, spaceId, key } = await h.world({ scopes: ['accounts', 'payments'] });
    const account = await h.makeWallet(spaceId);
    for (let index = 0; index < 53; index += 1) {
      const res = await h.inject({
        method: 'POST',
        url: '/integration/payment-requests',
        key: key.key,
        payload: { account_id: account.id, amount: '1', memo: `request ${index}` },
      });
      expect(res.statusCode).toBe(201);
    }
    const first = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${spaceId}/payment-requests`,
      session: seller.token,
    });
    expect(first.json().items).toHaveLength(50);
    expect(first.json().items[0].memo).toBe('request 52');
    const next = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${spaceId}/payment-requests?cursor=${first.json().next_cursor}`,
      session: seller.token,
    });
    expect(next.json().items.map((item: { memo: string }) => item.memo)).toEqual([
      'request 2',
      'request 1',
      'request 0',
    ]);
    expect(next.json().next_cursor).toBeNull();
    const bad = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${spaceId}/payment-requests?cursor=nope`,
      session: seller.token,
    });
    expect(bad.statusCode).toBe(422);
    const page = await h.inject({
      method: 'GET',
      url: `/app/books/${spaceId}/payment-requests`,
      headers: { cookie: cookie(seller) },
    });
    expect(page.body).toContain('Next page');
    expect(new Set(page.body.match(/request \d+/g))).toHaveProperty('size', 50);
  });
});
