import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, ManualClock } from '../src/core/clock.ts';
import { createHarness, type Harness, type Key } from './harness.ts';

// The auth contract every /integration route must keep (spec §5 and §7), run per route as
// Unkey does with its common route tests.

export type RouteUnderTest = {
  method: 'GET' | 'POST';
  url: string;
  scope: 'payments' | 'invoices' | 'contacts' | 'accounts' | 'transactions' | 'chats' | 'any';
  payload?: () => Record<string, unknown>;
  /** The status a well-authenticated call answers. */
  okStatus: number;
  /** Makes what the call needs in the key's space (an account, a request) and may replace url and payload. */
  setup?: (h: Harness, key: Key) => Promise<{ url?: string; payload?: Record<string, unknown> }>;
  /** Fields made afresh for every call, over setup's payload (a single-use sign-in). */
  freshFields?: () => Promise<Record<string, unknown>>;
};

const ONE_MESSAGE = 'The integration key is unknown, revoked or expired, or its issuer can no longer use it.';
const ALL_SCOPES = ['payments', 'invoices', 'contacts', 'accounts', 'transactions', 'chats'];

export function describeAuthContract(route: RouteUnderTest) {
  describe(`auth contract: ${route.method} ${route.url}`, () => {
    const clock = new ManualClock(new Date());
    let h: Harness;
    beforeAll(async () => {
      h = await createHarness({ clock });
    });
    afterAll(() => h.close());

    let prepared: { url?: string; payload?: Record<string, unknown> } = {};
    const call = async (key: string | undefined, headers: Record<string, string> = {}) =>
      h.inject({
        method: route.method,
        url: prepared.url ?? route.url,
        key,
        headers,
        payload: route.freshFields
          ? { ...prepared.payload, ...(await route.freshFields()) }
          : (prepared.payload ?? route.payload?.()),
      });
    const prepare = async (key: Key) => {
      prepared = route.setup ? await route.setup(h, key) : {};
    };
    const scopes = route.scope === 'any' ? ['contacts'] : [route.scope];
    const keyBody = (extra: Record<string, unknown> = {}) =>
      route.scope === 'transactions' ? { scopes, push_source: 'contract', ...extra } : { scopes, ...extra };

    it('admits a live key with the scope', async () => {
      const { key } = await h.world(keyBody());
      await prepare(key);
      const res = await call(key.key);
      expect(res.statusCode, res.body).toBe(route.okStatus);
      expect(res.headers['ratelimit-limit']).toBe('240');
    });

    it('refuses a call without a key with 401', async () => {
      const res = await call(undefined);
      expect(res.statusCode).toBe(401);
      expect(res.json().error).toBe('unauthorized');
    });

    it('refuses malformed and unknown keys with one identical message', async () => {
      const unknown = `oit_${'A'.repeat(43)}`;
      for (const header of [
        'Bearer oit_short',
        `Basic ${unknown}`,
        `Bearer ${unknown}x`,
        `Bearer ${unknown}`,
        'Bearer',
      ]) {
        const res = await call(undefined, { authorization: header });
        expect(res.statusCode, header).toBe(401);
        expect(res.json()).toEqual({ error: 'unauthorized', detail: ONE_MESSAGE });
      }
    });

    it('refuses a revoked key on the next call, with the same message', async () => {
      const { owner, spaceId, key } = await h.world(keyBody());
      await prepare(key);
      expect((await call(key.key)).statusCode).toBe(route.okStatus);
      const revoke = await h.inject({
        method: 'DELETE',
        url: `/app/api/spaces/${spaceId}/keys/${key.id}`,
        session: owner.token,
      });
      expect(revoke.statusCode).toBe(200);
      const res = await call(key.key);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'unauthorized', detail: ONE_MESSAGE });
    });

    it('refuses an expired key', async () => {
      const { key } = await h.world(keyBody({ lifetime_days: 30 }));
      await prepare(key);
      expect((await call(key.key)).statusCode).toBe(route.okStatus);
      clock.advance(30 * DAY_MS + 1000);
      try {
        const res = await call(key.key);
        expect(res.statusCode).toBe(401);
        expect(res.json().detail).toBe(ONE_MESSAGE);
      } finally {
        clock.advance(-(30 * DAY_MS + 1000));
      }
    });

    if (route.scope !== 'any') {
      it('refuses a key without the route scope with 403 missing_scope', async () => {
        const others = ALL_SCOPES.filter((scope) => scope !== route.scope && scope !== 'transactions');
        const { key } = await h.world({ scopes: others });
        prepared = {};
        const res = await call(key.key);
        expect(res.statusCode).toBe(403);
        expect(res.json().error).toBe('missing_scope');
      });
    }

    it('stops a key whose issuer was demoted to viewer (401) or removed (403)', async () => {
      const owner = await h.signup('Owner');
      const spaceId = await h.createSpace(owner);
      const admin = await h.signup('Admin');
      await h.addMember(owner, spaceId, admin, 'admin');
      const key = await h.issueKey(admin, spaceId, keyBody());
      await prepare(key);
      expect((await call(key.key)).statusCode).toBe(route.okStatus);
      const patch = (role: string) =>
        h.inject({
          method: 'PATCH',
          url: `/app/api/spaces/${spaceId}/members/${admin.id}`,
          session: owner.token,
          payload: { role },
        });
      expect((await patch('viewer')).statusCode).toBe(200);
      const demoted = await call(key.key);
      expect(demoted.statusCode).toBe(401);
      expect(demoted.json().detail).toBe(ONE_MESSAGE);
      expect((await patch('member')).statusCode).toBe(200);
      expect((await call(key.key)).statusCode).toBe(route.okStatus);
      const removal = await h.inject({
        method: 'DELETE',
        url: `/app/api/spaces/${spaceId}/members/${admin.id}`,
        session: owner.token,
      });
      expect(removal.statusCode).toBe(200);
      const removed = await call(key.key);
      expect(removed.statusCode).toBe(403);
      expect(removed.json()).toEqual({ error: 'not_a_member', detail: 'Not a member of this space' });
    });

    it('answers 404 while the rollout switch is off for the space', async () => {
      const { owner, spaceId, key } = await h.world(keyBody());
      await prepare(key);
      const toggle = (integration_enabled: boolean) =>
        h.inject({
          method: 'PATCH',
          url: `/app/api/spaces/${spaceId}`,
          session: owner.token,
          payload: { integration_enabled },
        });
      expect((await toggle(false)).statusCode).toBe(200);
      const res = await call(key.key);
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toBe('not_found');
      expect((await toggle(true)).statusCode).toBe(200);
      expect((await call(key.key)).statusCode).toBe(route.okStatus);
    });
  });
}
