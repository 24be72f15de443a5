import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type PgCluster, startPgCluster } from './fixtures/pg-cluster.ts';
import { waitFor } from './fixtures/ports.ts';
import { type ServerProcess, startServerProcess } from './fixtures/server-process.ts';

// SIGTERM must end a server within the 10 seconds an orchestrator grants, even when what it
// would close is already gone: the development chain killed under it, or its database stopped.

const EXIT_WITHIN_MS = 10_000;

// Each server runs on a fresh database of a cluster of this file's own (PostgreSQL starts a
// server faster than embedded PGlite, and the second test stops the cluster under its server).
let server: ServerProcess | undefined;
let cluster: PgCluster;
let databases = 0;
const freshDatabase = () => cluster.createDatabase(`tb_stop_${++databases}`);
beforeAll(async () => {
  cluster = await startPgCluster();
}, 120_000);
afterEach(async () => {
  if (server?.alive()) {
    server.kill('SIGKILL');
    await server.exited;
  }
  server = undefined;
});
afterAll(() => cluster?.destroy());

function childrenOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(/\s+/).map(Number);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Sends SIGTERM and answers how long the process took to exit, with its code. */
async function terminate(process: ServerProcess) {
  const started = Date.now();
  process.kill('SIGTERM');
  const outcome = await Promise.race([
    process.exited,
    new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), EXIT_WITHIN_MS + 5_000)),
  ]);
  return { outcome, elapsedMs: Date.now() - started };
}

/** Exit 0 when everything closed; exit 1 only with the log line naming what was still open. */
function expectCleanOrNamed(outcome: { code: number | null } | 'late', output: string) {
  expect(outcome).not.toBe('late');
  const { code } = outcome as { code: number | null };
  if (code === 0) return;
  expect(code).toBe(1);
  expect(output).toMatch(/shutdown deadline passed; still open: .+|a step of shutdown failed/);
}

describe('SIGTERM', () => {
  it('exits within 10 s when the development chain (anvil) was killed before it', async () => {
    server = await startServerProcess(
      { CHAIN: '1', DATABASE_URL: await freshDatabase() },
      { startTimeoutMs: 200_000 },
    );
    const anvils = childrenOf(server.pid);
    expect(anvils.length).toBeGreaterThan(0);
    for (const pid of anvils) process.kill(pid, 'SIGKILL');
    await waitFor('anvil is gone', async () => anvils.every((pid) => !isRunning(pid)), 5_000);
    const { outcome, elapsedMs } = await terminate(server);
    expect(elapsedMs, server.output().slice(-2000)).toBeLessThan(EXIT_WITHIN_MS);
    expectCleanOrNamed(outcome, server.output());
  }, 300_000);

  it('finishes a request in flight before it exits, and refuses new connections meanwhile', async () => {
    server = await startServerProcess({ DATABASE_URL: await freshDatabase() }, { startTimeoutMs: 200_000 });
    const inFlight = fetch(`${server.baseUrl}/integration/ping`, {
      headers: { authorization: `Bearer ${server.key}` },
    });
    // In flight means the server has the request: SIGTERM before it arrived would test a new one.
    const started = server;
    await waitFor(
      'the server has the request',
      async () =>
        /"url":"\/integration\/ping"[^\n]*"msg":"incoming request"|"msg":"incoming request"[^\n]*"url":"\/integration\/ping"/.test(
          started.output(),
        ),
      30_000,
      5,
    );
    const { outcome, elapsedMs } = await terminate(server);
    expect((await inFlight).status).toBe(200);
    expect(elapsedMs, server.output().slice(-2000)).toBeLessThan(EXIT_WITHIN_MS);
    expect(outcome, server.output().slice(-2000)).toEqual({ code: 0, signal: null });
    await expect(fetch(`${server.baseUrl}/livez`)).rejects.toThrow();
  }, 300_000);
  it('exits within 10 s when its database was stopped before it', async () => {
    server = await startServerProcess({ DATABASE_URL: await freshDatabase() }, { startTimeoutMs: 200_000 });
    await cluster.stop('immediate');
    const { outcome, elapsedMs } = await terminate(server);
    expect(elapsedMs, server.output().slice(-2000)).toBeLessThan(EXIT_WITHIN_MS);
    expectCleanOrNamed(outcome, server.output());
  }, 300_000);
});
