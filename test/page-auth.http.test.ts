import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type User } from './harness.ts';

// Every page route of a book, read from the server's own route table (so a screen added later is
// covered without touching this file): no session is sent to the login page, a person who is
// not a member of the book gets 404 for every GET and every POST (with their own valid CSRF
// token), and a POST without the CSRF token is refused even with the member's session cookie.

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

type PageRoute = { method: 'GET' | 'POST'; path: string };

/** The routes under /app/books/:book_id/…, from Fastify's printed route tree. */
function bookPageRoutes(tree: string): PageRoute[] {
  const stack: string[] = [];
  const routes: PageRoute[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([\s│├└─]*)(\S.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match || match[2] === undefined) continue;
    const depth = match[1]!.length / 4;
    const path = (depth > 0 ? (stack[depth - 1] ?? '') : '') + match[2];
    stack[depth] = path;
    stack.length = depth + 1;
    if (!path.startsWith('/app/books/:book_id')) continue;
    for (const method of (match[3] ?? '').split(', ')) {
      if (method === 'GET' || method === 'POST') routes.push({ method, path });
    }
  }
  return routes;
}

const UUID = '00000000-0000-4000-8000-000000000001';

/** Routes whose query is required: a well-formed one, so the route itself is reached. */
const REQUIRED_QUERY: Record<string, string> = {
  '/app/books/:book_id/income/payments': `?ref=${'0'.repeat(8)}-0000-4000-8000-000000000001&day=2026-01-01&currency=USD`,
};

/** A plausible value for each path parameter, so the route itself is reached. */
function filled(path: string, bookId: string): string {
  const query = REQUIRED_QUERY[path] ?? '';
  return `${fillParams(path, bookId)}${query}`;
}

// Each route is reached with an address it takes: a payout rule's kind before a chat claim's.
function fillParams(path: string, bookId: string): string {
  return path
    .replace(':book_id', bookId)
    .replace(/:token\b/g, `pr_${'x'.repeat(40)}`)
    .replace(/:client_ref\b/g, 'ref-1')
    .replace(/:action\b/g, 'pause')
    .replace(/rules\/:kind\b/g, 'rules/approval')
    .replace(/:kind\b/g, 'payer-claim')
    .replace(/:decision\b/g, 'confirm')
    .replace(/:[a-z_]+/g, UUID);
}

const cookie = (token: string) => ({ cookie: `tb_session=${token}` });
const form = { 'content-type': 'application/x-www-form-urlencoded' };

describe('every book page route: auth', () => {
  let routes: PageRoute[];
  let owner: User;
  let bookId: string;

  beforeAll(async () => {
    routes = bookPageRoutes(h.app.printRoutes({ commonPrefix: false }));
    owner = await h.signup('Owner');
    bookId = await h.createSpace(owner, { name: 'Owned' });
  });

  it('finds the book screens in the route table', () => {
    const paths = new Set(routes.map((route) => route.path));
    for (const screen of [
      'payment-requests',
      'keys',
      'accounts',
      'contacts',
      'clients',
      'endpoints',
      'income',
      'ledger',
      'push',
      'subscriptions',
      'members',
      'sites',
      'settings',
      'notifications',
    ]) {
      expect(paths, screen).toContain(`/app/books/:book_id/${screen}`);
    }
    expect(routes.length).toBeGreaterThan(40);
  });

  it('sends a visitor without a session to the login page, for every GET and POST', async () => {
    for (const route of routes) {
      const url = filled(route.path, bookId);
      const res =
        route.method === 'GET'
          ? await h.inject({ method: 'GET', url })
          : await h.inject({ method: 'POST', url, headers: form, payload: '_csrf=x' });
      expect(res.statusCode, `${route.method} ${route.path}`).toBe(303);
      expect(res.headers.location, `${route.method} ${route.path}`).toMatch(/^\/app\/login/);
    }
  });

  it('answers 404 to a signed-in person who is not in the book, for every GET and POST', async () => {
    const stranger = await h.signup('Stranger');
    for (const route of routes) {
      const url = filled(route.path, bookId);
      const res =
        route.method === 'GET'
          ? await h.inject({ method: 'GET', url, headers: cookie(stranger.token) })
          : await h.inject({
              method: 'POST',
              url,
              headers: { ...cookie(stranger.token), ...form },
              payload: `_csrf=${stranger.csrf}`,
            });
      expect(res.statusCode, `${route.method} ${route.path}`).toBe(404);
      expect(res.body).not.toContain('Owned');
    }
  });

  it('refuses every write of a viewer (403) before it runs, but marking their own notifications read', async () => {
    const viewer = await h.signup('Viewer');
    await h.addMember(owner, bookId, viewer, 'viewer');
    for (const route of routes.filter((each) => each.method === 'POST')) {
      const res = await h.inject({
        method: 'POST',
        url: filled(route.path, bookId),
        headers: { ...cookie(viewer.token), ...form },
        payload: `_csrf=${viewer.csrf}`,
      });
      const own = route.path.endsWith('/notifications/read');
      expect(res.statusCode, route.path).toBe(own ? 303 : 403);
    }
  });

  it('refuses every POST without the CSRF token, even with the owner’s session cookie', async () => {
    for (const route of routes.filter((each) => each.method === 'POST')) {
      const res = await h.inject({
        method: 'POST',
        url: filled(route.path, bookId),
        headers: { ...cookie(owner.token), ...form },
        payload: 'name=x',
      });
      expect(res.statusCode, route.path).toBe(403);
    }
  });
});
