import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.ts';

// The limit is 240 calls per rolling minute per key, counted in the database, so every server
// process sharing it sees the same count.

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  server.close();
  return port;
}

async function startSecondServer(databaseUrl: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      DEMO: '0',
      RUN_WORKERS: '0',
      LOG_LEVEL: 'warn',
      MASTER_KEY: 'ab'.repeat(32),
      REDIS_URL: '',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      if ((await fetch(`${url}/livez`)).ok) return { child, url };
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error('The second server did not start.');
}

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const ping = (key: string, harness: Harness = h) =>
  harness.inject({ method: 'GET', url: '/integration/ping', key });

describe('rate limit', () => {
  it('admits 240 calls in a minute and refuses the 241st with 429, Retry-After and RateLimit headers', async () => {
    const { key } = await h.world();
    const answers = await Promise.all(Array.from({ length: 240 }, () => ping(key.key)));
    expect(answers.every((res) => res.statusCode === 200)).toBe(true);
    const remaining = answers.map((res) => Number(res.headers['ratelimit-remaining'])).sort((a, b) => a - b);
    expect(remaining[0]).toBe(0);
    expect(remaining[239]).toBe(239);
    const refused = await ping(key.key);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(70);
    expect(refused.headers['ratelimit-limit']).toBe('240');
    expect(refused.headers['ratelimit-remaining']).toBe('0');
  });

  it('counts each key on its own', async () => {
    const first = await h.world();
    const second = await h.world();
    await Promise.all(Array.from({ length: 241 }, () => ping(first.key.key)));
    expect((await ping(first.key.key)).statusCode).toBe(429);
    expect((await ping(second.key.key)).statusCode).toBe(200);
  });

  it('shares the count between two app instances on one database (no count in process memory)', async () => {
    const other = await createHarness();
    try {
      const { key } = await h.world();
      await Promise.all(Array.from({ length: 120 }, () => ping(key.key, h)));
      await Promise.all(Array.from({ length: 120 }, () => ping(key.key, other)));
      expect((await ping(key.key, other)).statusCode).toBe(429);
      expect((await ping(key.key, h)).statusCode).toBe(429);
    } finally {
      await other.close();
    }
  });

  const databaseUrl = process.env.DATABASE_URL;
  it.runIf(databaseUrl !== undefined)(
    'shares the count with a second server process on the same PostgreSQL',
    async () => {
      const { child, url } = await startSecondServer(databaseUrl!);
      try {
        const { key } = await h.world();
        await Promise.all(Array.from({ length: 120 }, () => ping(key.key)));
        const remote = await Promise.all(
          Array.from({ length: 120 }, () =>
            fetch(`${url}/integration/ping`, { headers: { authorization: `Bearer ${key.key}` } }),
          ),
        );
        expect(remote.map((res) => res.status)).toEqual(Array(120).fill(200));
        expect(
          (await fetch(`${url}/integration/ping`, { headers: { authorization: `Bearer ${key.key}` } }))
            .status,
        ).toBe(429);
        expect((await ping(key.key)).statusCode).toBe(429);
      } finally {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    },
    60_000,
  );
});
