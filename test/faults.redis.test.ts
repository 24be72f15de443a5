import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PgCluster, startPgCluster } from './fixtures/pg-cluster.ts';
import { waitFor } from './fixtures/ports.ts';
import { type RedisServer, startRedisServer } from './fixtures/redis-server.ts';
import { type ServerProcess, startServerProcess } from './fixtures/server-process.ts';

// With REDIS_URL, Redis holds the rate counter and the auth stamps. Killed under load, it makes
// the server fail closed: calls that need it answer 503 with Retry-After, never a 500 and never
// admitted uncounted; the process lives, and the calls succeed again once Redis is back.

let cluster: PgCluster;
let redis: RedisServer;
let server: ServerProcess;

beforeAll(async () => {
  cluster = await startPgCluster();
  redis = await startRedisServer();
  server = await startServerProcess(
    {
      DATABASE_URL: await cluster.createDatabase('tb_redis'),
      REDIS_URL: redis.url,
      RATE_LIMIT_PER_MINUTE: '1000000',
    },
    { startTimeoutMs: 200_000 },
  );
}, 300_000);
afterAll(async () => {
  if (server?.alive()) {
    server.kill('SIGTERM');
    await server.exited;
  }
  await redis?.stop();
  await cluster?.destroy();
});

type Answer = { status: number; retryAfter: string | null; error: string | undefined };

async function ping(): Promise<Answer> {
  const res = await fetch(`${server.baseUrl}/integration/ping`, {
    headers: { authorization: `Bearer ${server.key}` },
  });
  const body = (await res.json()) as { error?: string };
  return { status: res.status, retryAfter: res.headers.get('retry-after'), error: body.error };
}

describe('Redis killed under load', () => {
  it('answers 503 with Retry-After while Redis is gone, lives, and succeeds again once it is back', async () => {
    expect((await ping()).status).toBe(200);
    const answers: Answer[] = [];
    let stop = false;
    const load = Array.from({ length: 20 }, async () => {
      while (!stop) answers.push(await ping());
    });
    await waitFor('the load is running', async () => answers.length >= 20, 10_000, 10);
    await redis.kill();
    await waitFor(
      'a call answers 503',
      async () => answers.some((answer) => answer.status === 503),
      15_000,
      20,
    );
    await redis.start();
    await waitFor('calls succeed again', async () => answers.at(-1)?.status === 200, 15_000, 20);
    stop = true;
    await Promise.all(load);
    for (const answer of answers) {
      if (answer.status === 200) continue;
      expect(answer).toEqual({ status: 503, retryAfter: '1', error: 'service_unavailable' });
    }
    const after = await Promise.all(Array.from({ length: 20 }, ping));
    expect(after.map((answer) => answer.status)).toEqual(after.map(() => 200));
    expect(server.alive()).toBe(true);
    expect(server.output()).toContain('Redis unreachable');
    expect(server.output()).toContain('Redis reachable again');
  }, 90_000);
});
