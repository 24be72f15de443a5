import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { worstBodies } from '../bench/worst-bodies.ts';
import { BODY_LIMIT_BYTES } from '../src/app.ts';
import { createHarness, type Harness } from './harness.ts';

// The worst bodies we can build, at the 1 MiB limit, sent to a real listening server on every
// route family (public login, the owner's app, the integration API, pushed rows, the x402
// facilitator, the public pay page). Each must be answered (never a 5xx) within a time
// proportional to its size, and /livez must keep answering meanwhile: no body stalls the process.
// A quadratic step took minutes on such bodies; the bound is seconds, so noise cannot hide one.

const MS_PER_MIB = 4000;
const LIVEZ_EVERY_MS = 25;

let h: Harness;
let base: string;
let headersFor: Record<string, Record<string, string>>;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  const { owner, key, spaceId } = await h.world();
  const pushKey = await h.issueKey(owner, spaceId, { scopes: ['transactions'], push_source: 'erp' });
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  headersFor = {
    key: { authorization: `Bearer ${key.key}` },
    push: { authorization: `Bearer ${pushKey.key}` },
    session: { authorization: `Bearer ${owner.token}` },
    none: {},
  };
});
afterAll(() => h.close());

const ROUTES: { family: string; url: string; auth: 'key' | 'push' | 'session' | 'none' }[] = [
  { family: 'public login', url: '/app/api/login', auth: 'none' },
  { family: 'owner app', url: '/app/api/spaces', auth: 'session' },
  { family: 'integration', url: '/integration/charges', auth: 'key' },
  { family: 'pushed rows', url: '/integration/transactions', auth: 'push' },
  { family: 'x402 facilitator', url: '/x402/verify', auth: 'none' },
  { family: 'public pay page', url: '/pay/not-a-token/card', auth: 'none' },
];

/** Polls /livez until stopped; returns the slowest answer's time. */
function watchLivez() {
  let slowest = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const res = await fetch(`${base}/livez`);
      await res.arrayBuffer();
      slowest = Math.max(slowest, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, LIVEZ_EVERY_MS));
    }
  })();
  return async () => {
    running = false;
    await loop;
    return slowest;
  };
}

describe('the worst bodies at the 1 MiB limit', () => {
  const bodies = worstBodies(BODY_LIMIT_BYTES - 1);

  it('are all exactly at the limit', () => {
    for (const body of bodies) expect(Buffer.byteLength(body.text), body.name).toBe(BODY_LIMIT_BYTES - 1);
  });

  for (const route of ROUTES) {
    it(`are answered in time proportional to their size on ${route.family} (${route.url}), /livez answering`, {
      timeout: 120_000,
    }, async () => {
      for (const body of bodies) {
        const boundMs = (MS_PER_MIB * Buffer.byteLength(body.text)) / (1024 * 1024);
        const stop = watchLivez();
        const started = performance.now();
        const res = await fetch(`${base}${route.url}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headersFor[route.auth] },
          body: body.text,
        });
        const answer = await res.text();
        const elapsedMs = performance.now() - started;
        const livezMs = await stop();
        const label = `${route.url} ${body.name}: ${res.status} in ${Math.round(elapsedMs)} ms, /livez ${Math.round(livezMs)} ms`;
        expect(res.status, `${label} ${answer.slice(0, 200)}`).toBeLessThan(500);
        expect(res.status, label).toBeGreaterThanOrEqual(400);
        // Past the door: the body was read, not refused for want of a key.
        expect([401, 403], label).not.toContain(res.status);
        expect(elapsedMs, label).toBeLessThan(boundMs);
        expect(livezMs, label).toBeLessThan(boundMs);
      }
    });
  }

  it('one byte over the limit is refused with 413 before it is read', async () => {
    const res = await fetch(`${base}/app/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `"${'0'.repeat(BODY_LIMIT_BYTES - 1)}"`,
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: 'payload_too_large' });
  });
});
