import { Redis } from 'ioredis';
import type { Logger } from 'pino';

// The one Redis client of a server process (REDIS_URL): the rate counter and the auth stamps.
//
// Redis unreachable means fail closed: a call that needs it waits for at most a few reconnect
// attempts, then fails and is answered 503 with Retry-After. Counting in PostgreSQL instead would
// let a revoked key through in a process whose key cache trusts a stamp it cannot read, and would
// split one rolling minute between two counters. ioredis reconnects on its own; the first call
// after Redis is back succeeds.

const RECONNECT_DELAY_MAX_MS = 1_000;
const CONNECT_TIMEOUT_MS = 2_000;

export function createRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    // Commands queued while disconnected fail after two reconnect attempts, not at once and not never.
    maxRetriesPerRequest: 2,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 100, RECONNECT_DELAY_MAX_MS),
  });
  // Reported once per outage: ioredis emits `error` on every failed reconnect attempt.
  let down = false;
  redis.on('error', (error) => {
    if (down) return;
    down = true;
    logger.warn({ err: error }, 'Redis unreachable; calls that need it answer 503 until it is back');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info('Redis reachable again');
  });
  return redis;
}

/** A Redis command failed because Redis could not be reached (not because it refused the command). */
export function isRedisUnreachable(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  const { name, message, code } = error as { name?: unknown; message?: unknown; code?: unknown };
  if (name === 'MaxRetriesPerRequestError') return true;
  if (message === 'Connection is closed.') return true;
  return code === 'ECONNREFUSED' || code === 'ECONNRESET';
}
