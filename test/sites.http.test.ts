import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.ts';

// Proving control of a site, and what it changes: the space's payment pages may be framed there.

let h: Harness;
let site: Server;
let published = '';
let status = 200;
let sitePort: number;
beforeAll(async () => {
  h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
  site = createServer((req, res) => {
    if (req.url !== '/.well-known/tollbook-site.txt') return res.writeHead(404).end();
    res.writeHead(status, { 'content-type': 'text/plain' }).end(published);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  sitePort = (site.address() as AddressInfo).port;
});
afterAll(async () => {
  await h.close();
  await new Promise((resolve) => site.close(resolve));
});

async function seller() {
  const world = await h.world({ scopes: ['payments'] });
  const bank = await h.makeAccount(world.spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
  const sites = (path = '', payload?: Record<string, unknown>, method: 'GET' | 'POST' | 'DELETE' = 'POST') =>
    h.inject({
      method,
      url: `/app/api/spaces/${world.spaceId}/sites${path}`,
      session: world.owner.token,
      payload,
    });
  const request = async () =>
    (
      await h.inject({
        method: 'POST',
        url: '/integration/payment-requests',
        key: world.key.key,
        payload: { account_id: bank.id, amount: '3' },
      })
    ).json().token as string;
  return { ...world, sites, request };
}

const origin = () => `http://localhost:${sitePort}`;

describe('POST /app/api/spaces/{id}/sites', () => {
  it('registers an origin with a token to publish, and answers the same site for the same origin', async () => {
    const s = await seller();
    const res = await s.sites('', { origin: `${origin()}/` });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      origin: origin(),
      token: expect.stringMatching(/^tollbook-site-/),
      well_known_url: `${origin()}/.well-known/tollbook-site.txt`,
      verified: false,
    });
    const again = await s.sites('', { origin: origin().toUpperCase().replace('HTTP://', 'http://') });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(res.json().id);
  });

  it('accepts domain names, punycode and IP literals as the browser spells them', async () => {
    const s = await seller();
    for (const [given, stored] of [
      ['https://Shop.Example.com:443', 'https://shop.example.com'],
      ['https://ünï.example', 'https://xn--n-nga1b.example'],
      ['https://93.184.215.14:8443', 'https://93.184.215.14:8443'],
      ['https://[2001:db8::1]', 'https://[2001:db8::1]'],
    ]) {
      const res = await s.sites('', { origin: given });
      expect(res.statusCode, given).toBe(201);
      expect(res.json().origin).toBe(stored);
    }
  });

  it('refuses what is not an origin', async () => {
    const s = await seller();
    for (const bad of [
      'shop.example.com',
      'ftp://shop.example.com',
      'https://shop.example.com/pay',
      'https://a:b@shop.example.com',
      'https://shop.example.com/?x=1',
      "https://a.com'",
      'https://a.com%27',
      'https://*.com',
      'https://*.shop.example.com',
      'https://a.com;x',
      'https://a_b.com',
      'https://-a.com',
      'https://a..com',
      'https://a.com.',
      `https://${'a'.repeat(64)}.com`,
    ]) {
      const res = await s.sites('', { origin: bad });
      expect(res.statusCode, bad).toBe(422);
      expect(res.json()).toMatchObject({ error: 'invalid_request', details: { field: 'origin' } });
    }
  });
});

describe('verifying a site, and framing', () => {
  it('frames nothing until the token is published; then the pay page allows exactly the proven origin', async () => {
    const s = await seller();
    const added = (await s.sites('', { origin: origin() })).json();
    const token = await s.request();
    const before = await h.inject({ method: 'GET', url: `/pay/${token}` });
    expect(before.headers['x-frame-options']).toBe('DENY');
    expect(before.headers['content-security-policy']).toContain("frame-ancestors 'none'");

    published = 'something else\n';
    const refused = await s.sites(`/${added.id}/verify`);
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toMatchObject({ error: 'site_not_verified' });
    status = 404;
    published = added.token;
    expect((await s.sites(`/${added.id}/verify`)).json().detail).toContain('answered 404');
    status = 200;
    published = `# Tollbook\n${added.token}\n`;
    const verified = await s.sites(`/${added.id}/verify`);
    expect(verified.statusCode).toBe(200);
    expect(verified.json()).toMatchObject({ verified: true, verified_at: expect.any(String) });

    const after = await h.inject({ method: 'GET', url: `/pay/${token}` });
    expect(after.headers['x-frame-options']).toBeUndefined();
    expect(after.headers['content-security-policy']).toContain(`frame-ancestors ${origin()}`);
    // Another space's page, the JSON quote and the balance pages still refuse framing.
    const other = await seller();
    const elsewhere = await h.inject({ method: 'GET', url: `/pay/${await other.request()}` });
    expect(elsewhere.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    const machine = await h.inject({
      method: 'GET',
      url: `/pay/${token}`,
      headers: { accept: 'application/json' },
    });
    expect(machine.headers['x-frame-options']).toBe('DENY');

    expect((await s.sites(`/${added.id}`, undefined, 'DELETE')).statusCode).toBe(204);
    const removed = await h.inject({ method: 'GET', url: `/pay/${token}` });
    expect(removed.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it('refuses to fetch a private address unless development admits it', async () => {
    const strict = await createHarness();
    try {
      const world = await strict.world();
      const url = `/app/api/spaces/${world.spaceId}/sites`;
      const added = await strict.inject({
        method: 'POST',
        url,
        session: world.owner.token,
        payload: { origin: 'https://internal.example.com' },
      });
      const res = await strict.inject({
        method: 'POST',
        url: `${url}/${added.json().id}/verify`,
        session: world.owner.token,
      });
      expect(res.statusCode).toBe(422);
      expect(res.json().error).toBe('site_not_verified');
    } finally {
      await strict.close();
    }
  });
});
