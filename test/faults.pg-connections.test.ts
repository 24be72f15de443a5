import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PgCluster, startPgCluster } from './fixtures/pg-cluster.ts';
import { waitFor } from './fixtures/ports.ts';
import { type ServerProcess, startServerProcess } from './fixtures/server-process.ts';

// What a PostgreSQL restart, a failover or a pooler's idle timeout does to a server: every one of
// its connections is cut. A real server process on a cluster of this test's own.

let cluster: PgCluster;
let server: ServerProcess;
const DATABASE = 'tb_cut';

beforeAll(async () => {
  cluster = await startPgCluster();
  const url = await cluster.createDatabase(DATABASE);
  server = await startServerProcess(
    { DATABASE_URL: url, RATE_LIMIT_PER_MINUTE: '1000000' },
    { startTimeoutMs: 200_000 },
  );
}, 300_000);
afterAll(async () => {
  if (server?.alive()) {
    server.kill('SIGTERM');
    await server.exited;
  }
  await cluster?.destroy();
});

async function healthy(): Promise<boolean> {
  try {
    const res = await fetch(`${server.baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

type Answer = { status: number; retryAfter: string | null; body: { error?: string } };

async function ping(): Promise<Answer> {
  const res = await fetch(`${server.baseUrl}/integration/ping`, {
    headers: { authorization: `Bearer ${server.key}` },
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
}

/** Every answer is a success or the 503 the spec's body and Retry-After describe; never a 500. */
function expectSuccessOrRetry(answers: Answer[]) {
  for (const answer of answers) {
    if (answer.status === 200) continue;
    expect(answer.status, JSON.stringify(answer.body)).toBe(503);
    expect(answer.retryAfter).toBe('1');
    expect(answer.body.error).toBe('service_unavailable');
  }
}

describe('cutting every database connection of a running server', () => {
  it('while idle: the process lives, logs the cut, and /healthz answers 200 within 5 s', async () => {
    expectSuccessOrRetry(await Promise.all(Array.from({ length: 12 }, ping)));
    expect((await ping()).status).toBe(200);
    const cut = await cluster.terminateConnections(DATABASE);
    expect(cut).toBeGreaterThan(0);
    await waitFor(
      'the server logs the lost connection',
      async () => /database connection lost/.test(server.output()),
      5_000,
    );
    await waitFor('/healthz answers 200', healthy, 5_000);
    expect(server.alive()).toBe(true);
    expect((await ping()).status).toBe(200);
  });

  it('under 50 concurrent requests: in-flight ones get 503 with Retry-After, the process lives, and the next ones succeed', async () => {
    const answers: Answer[] = [];
    let cuts = 0;
    let stop = false;
    const load = Array.from({ length: 50 }, async () => {
      while (!stop) answers.push(await ping());
    });
    await waitFor('the load is running', async () => answers.length >= 50, 10_000, 10);
    for (let round = 0; round < 3; round += 1) {
      cuts += await cluster.terminateConnections(DATABASE);
      const seen = answers.length;
      await waitFor(
        'requests after the cut are answered',
        async () => answers.length >= seen + 50,
        10_000,
        10,
      );
    }
    stop = true;
    await Promise.all(load);
    expect(cuts).toBeGreaterThan(0);
    expectSuccessOrRetry(answers);
    await waitFor('/healthz answers 200', healthy, 5_000);
    expect(server.alive()).toBe(true);
    const after = await Promise.all(Array.from({ length: 20 }, ping));
    expect(after.map((answer) => answer.status)).toEqual(after.map(() => 200));
    expect(server.output()).not.toMatch(
      /Unhandled 'error' event|unhandled promise rejection|uncaught exception/,
    );
  });
});
