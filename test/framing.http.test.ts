import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.ts';

const METRICS_TOKEN = 'framing-test-metrics-token-0123456789';

// Issue 22 item 4: every answer refuses framing (spec §1), whatever route family answers it and
// whether it succeeds or fails; only a pay page of a space with proven sites differs
// (test/sites.http.test.ts proves that exception).

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { METRICS_TOKEN: METRICS_TOKEN } });
});
afterAll(async () => {
  await h.close();
});

function expectRefused(res: { headers: Record<string, unknown>; statusCode: number }, what: string) {
  expect(res.headers['x-frame-options'], what).toBe('DENY');
  const policy = String(res.headers['content-security-policy'] ?? '');
  expect(policy, what).toMatch(/(^|;)\s*frame-ancestors 'none'(;|$)/);
  // One policy only: a second frame-ancestors would leave browsers to pick.
  expect(policy.match(/frame-ancestors/g)?.length, what).toBe(1);
}

describe('frame refusal on every route family', () => {
  it('refuses framing on JSON answers, documents, errors and 404s alike', async () => {
    const world = await h.world({ scopes: ['payments'] });
    const bank = await h.makeAccount(world.spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
    const minted = await h.inject({
      method: 'POST',
      url: '/integration/payment-requests',
      key: world.key.key,
      payload: { account_id: bank.id, amount: '3' },
    });
    const token = minted.json().token as string;
    const cases: [string, Parameters<Harness['inject']>[0], number][] = [
      ['liveness', { method: 'GET', url: '/livez' }, 200],
      ['readiness', { method: 'GET', url: '/healthz' }, 200],
      ['OpenAPI document', { method: 'GET', url: '/openapi.json' }, 200],
      ['API reference redirect', { method: 'GET', url: '/docs' }, 301],
      ['API reference', { method: 'GET', url: '/docs/' }, 200],
      ['API reference script', { method: 'GET', url: '/docs/js/scalar.js' }, 200],
      [
        'metrics',
        { method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } },
        200,
      ],
      ['x402 discovery', { method: 'GET', url: '/x402/discovery/resources' }, 200],
      ['integration JSON', { method: 'GET', url: '/integration/ping', key: world.key.key }, 200],
      [
        'integration write',
        { method: 'GET', url: `/integration/payment-requests/${token}`, key: world.key.key },
        200,
      ],
      ['integration without key', { method: 'GET', url: '/integration/ping' }, 401],
      [
        'integration 422',
        {
          method: 'POST',
          url: '/integration/payment-requests',
          key: world.key.key,
          payload: { amount: 'x' },
        },
        422,
      ],
      [
        'integration 415',
        {
          method: 'POST',
          url: '/integration/payment-requests',
          key: world.key.key,
          payload: 'a=1',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        },
        415,
      ],
      [
        'app API JSON',
        { method: 'GET', url: `/app/api/spaces/${world.spaceId}`, session: world.owner.token },
        200,
      ],
      ['app API without session', { method: 'GET', url: `/app/api/spaces/${world.spaceId}` }, 401],
      ['unknown path', { method: 'GET', url: '/no/such/thing' }, 404],
      ['malformed URL', { method: 'GET', url: '/integration/payment-requests/%E0%A4%A' }, 400],
      [
        'pay page JSON quote',
        { method: 'GET', url: `/pay/${token}`, headers: { accept: 'application/json' } },
        402,
      ],
      ['pay page (no proven site)', { method: 'GET', url: `/pay/${token}` }, 200],
      ['pay page preflight', { method: 'OPTIONS', url: `/pay/${token}` }, 204],
      ['unknown pay page', { method: 'GET', url: '/pay/pr_nothing' }, 404],
    ];
    for (const [what, request, status] of cases) {
      const res = await h.inject(request);
      expect(res.statusCode, what).toBe(status);
      expectRefused(res, what);
    }
  });
});
