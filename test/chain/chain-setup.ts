import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../../src/app.ts';
import { systemClock } from '../../src/core/clock.ts';
import { noAuthStamps } from '../../src/platform/auth-stamps.ts';
import { type Chain, createChain } from '../../src/platform/chain/chain.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { SecretBox } from '../../src/platform/crypto.ts';
import { createPostgresRateLimiter } from '../../src/platform/http/rate-limit.ts';
import { sharedDatabase, testResolver } from '../harness.ts';

// The chain tests' own setup (the shared harness never starts a chain): each file starts one
// anvil in beforeAll and stops it in afterAll. Start-up timeouts are generous because CI
// machines are slow and run two test workers at once.

export const CHAIN_START_TIMEOUT_MS = 60_000;

export function startTestChain(): Promise<Chain> {
  return createChain({
    local: true,
    logger: pino({ level: 'silent' }),
    startTimeoutMs: CHAIN_START_TIMEOUT_MS,
  });
}

/**
 * Whether a process still runs. A zombie (exited, not yet reaped by whoever adopted it) counts
 * as gone: it holds no port and runs no code.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

export async function waitUntilGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isRunning(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !isRunning(pid);
}

/**
 * The real app (on the test database) with a chain in its deps, as `serve` builds it. A test that
 * opens what the app seals (agent keys) passes its own `secrets`; one that reads the log, a logger.
 */
export async function buildChainApp(
  chain: Chain,
  env: Record<string, string> = {},
  options: { secrets?: SecretBox; logger?: Parameters<typeof buildApp>[0]['logger'] } = {},
): Promise<FastifyInstance> {
  const database = await sharedDatabase();
  const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: 'memory://', LOG_LEVEL: 'silent', ...env });
  const app = await buildApp({
    config,
    database,
    clock: systemClock,
    logger: options.logger ?? false,
    secrets: options.secrets ?? new SecretBox(randomBytes(32).toString('hex')),
    authStamps: noAuthStamps,
    limiter: createPostgresRateLimiter(database.db, systemClock, config.rateLimitPerMinute),
    resolver: testResolver,
    redis: undefined,
    chain,
  });
  await app.ready();
  return app;
}
