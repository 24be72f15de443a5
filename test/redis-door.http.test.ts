import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAgentBook } from './agents-setup.ts';
import { createHarness, type Harness } from './harness.ts';

// With REDIS_URL the door caches keys in each process. These tests run two app instances, as two
// server processes would, sharing one database and one Redis: a change made through one must
// stop the key in the other on its very next call, with no waiting.

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function redisAnswers(): Promise<boolean> {
  const probe = new Redis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 500,
    retryStrategy: () => null,
  });
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

// CI sets REQUIRE_REDIS=1 so a missing Redis fails the run instead of skipping these tests.
const available = await redisAnswers();
if (!available && process.env.REQUIRE_REDIS === '1')
  throw new Error(`REQUIRE_REDIS=1 but no Redis answers at ${redisUrl}.`);

describe.runIf(available)('the door with Redis', () => {
  let a: Harness;
  let b: Harness;
  let redis: Redis;
  beforeAll(async () => {
    a = await createHarness({ redis: true });
    b = await createHarness({ redis: true });
    redis = new Redis(redisUrl);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    redis.disconnect();
  });
  const ping = (harness: Harness, key: string) =>
    harness.inject({ method: 'GET', url: '/integration/ping', key });

  it('stops a cached key on its next call after a revocation made through another process', async () => {
    const { owner, spaceId, key } = await a.world();
    expect((await ping(b, key.key)).statusCode).toBe(200);
    expect((await ping(b, key.key)).statusCode).toBe(200);
    await a.inject({
      method: 'DELETE',
      url: `/app/api/spaces/${spaceId}/keys/${key.id}`,
      session: owner.token,
    });
    expect((await ping(b, key.key)).statusCode).toBe(401);
  });

  it('stops a cached key when its issuer is demoted, removed, or the rollout is switched off', async () => {
    const owner = await a.signup();
    const spaceId = await a.createSpace(owner);
    const admin = await a.signup();
    await a.addMember(owner, spaceId, admin, 'admin');
    const key = await a.issueKey(admin, spaceId);
    expect((await ping(b, key.key)).statusCode).toBe(200);
    const role = (r: string) =>
      a.inject({
        method: 'PATCH',
        url: `/app/api/spaces/${spaceId}/members/${admin.id}`,
        session: owner.token,
        payload: { role: r },
      });
    await role('viewer');
    expect((await ping(b, key.key)).statusCode).toBe(401);
    await role('admin');
    expect((await ping(b, key.key)).statusCode).toBe(200);
    await a.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${spaceId}`,
      session: owner.token,
      payload: { integration_enabled: false },
    });
    expect((await ping(b, key.key)).statusCode).toBe(404);
    await a.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${spaceId}`,
      session: owner.token,
      payload: { integration_enabled: true },
    });
    await a.inject({
      method: 'DELETE',
      url: `/app/api/spaces/${spaceId}/members/${admin.id}`,
      session: owner.token,
    });
    expect((await ping(b, key.key)).statusCode).toBe(403);
  });

  it('reloads from the database when Redis has lost the stamp, and still sees a revocation', async () => {
    const { owner, spaceId, key } = await a.world();
    expect((await ping(b, key.key)).statusCode).toBe(200);
    // Revoke in the database directly, as if the stamp write had been lost with Redis' memory.
    await a.db
      .updateTable('integration_keys')
      .set({ revoked_at: new Date() })
      .where('id', '=', key.id)
      .execute();
    await a.db
      .updateTable('spaces')
      .set((eb) => ({ auth_version: eb('auth_version', '+', 1) }))
      .where('id', '=', spaceId)
      .execute();
    await redis.del(`tb:auth:${spaceId}`);
    expect((await ping(b, key.key)).statusCode).toBe(401);
    expect(owner.id).toBeTruthy();
  });

  it('admits an agent token, counts its calls in Redis across processes and stops it once revoked', async () => {
    const book = await makeAgentBook(a);
    const agent = await book.issue();
    const me = (harness: Harness) =>
      harness.inject({
        method: 'GET',
        url: '/agent/me',
        headers: { authorization: `Bearer ${agent.token}` },
      });
    const first = await me(a);
    expect(first.statusCode).toBe(200);
    expect(first.json().agent_id).toBe(agent.id);
    const second = await me(b);
    expect(second.statusCode).toBe(200);
    // One count for the token, whichever process answered.
    expect(Number(second.headers['ratelimit-remaining'])).toBe(
      Number(first.headers['ratelimit-remaining']) - 1,
    );
    const revoked = await a.inject({
      method: 'DELETE',
      url: `/app/api/spaces/${book.spaceId}/agents/${agent.id}`,
      session: book.owner.token,
    });
    expect(revoked.statusCode).toBeLessThan(300);
    expect((await me(b)).statusCode).toBe(401);
    expect((await me(a)).statusCode).toBe(401);
  });

  it('shares the rate count between processes through Redis', async () => {
    const { key } = await a.world();
    await Promise.all(Array.from({ length: 120 }, () => ping(a, key.key)));
    await Promise.all(Array.from({ length: 120 }, () => ping(b, key.key)));
    expect((await ping(a, key.key)).statusCode).toBe(429);
    expect((await ping(b, key.key)).statusCode).toBe(429);
  });
});
