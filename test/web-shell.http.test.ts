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
