import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import type { AppDeps } from './app.ts';
import { type Clock, systemClock } from './core/clock.ts';
import { createRedisAuthStamps, noAuthStamps } from './platform/auth-stamps.ts';
import { type Chain, createChain } from './platform/chain/chain.ts';
import { type Config, databaseOf } from './platform/config.ts';
import { SecretBox } from './platform/crypto.ts';
import { openDatabase } from './platform/db/database.ts';
import { migrate } from './platform/db/migrate.ts';
import { createPostgresRateLimiter, createRedisRateLimiter } from './platform/http/rate-limit.ts';
import { cachedResolver, type Resolver, systemResolver } from './platform/net/public-address.ts';
import { createRedis } from './platform/redis.ts';
import { traceFields } from './platform/telemetry/log-context.ts';

/**
 * The master key seals webhook secrets. Production must set MASTER_KEY; in development one is
 * generated into the data dir on first start (with a warning), so restarts can still open them.
 */
export function loadMasterKey(config: Config, logger: Logger): string {
  if (config.masterKey) return config.masterKey;
  const path = join(config.dataDir, 'master.key');
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  mkdirSync(config.dataDir, { recursive: true });
  const key = randomBytes(32).toString('hex');
  writeFileSync(path, `${key}\n`, { mode: 0o600 });
  logger.warn(
    { path },
    'MASTER_KEY is not set: generated a development master key; set MASTER_KEY in production',
  );
  return key;
}

export type RuntimeOverrides = {
  clock?: Clock;
  resolver?: Resolver;
  logger?: Logger | false;
  masterKey?: string;
  /** Start the chain (the local anvil and configured networks): `serve` does; CLI commands and tests do not. */
  chain?: boolean;
};

export type Runtime = AppDeps & { close(): Promise<void> };

/** The process's logger: each line carries the active trace's ids when tracing is on (platform/telemetry). */
export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({ level: config.logLevel, mixin: traceFields });
}

export async function createRuntime(config: Config, overrides: RuntimeOverrides = {}): Promise<Runtime> {
  const logger = overrides.logger ?? createLogger(config);
  const quietLogger = logger === false ? pino({ level: 'silent' }) : logger;
  const clock = overrides.clock ?? systemClock;
  const database = await openDatabase({
    ...databaseOf(config),
    onConnectionLost: (error) =>
      quietLogger.warn({ err: error }, 'database connection lost; the pool opens a new one when needed'),
  });
  const applied = await migrate(database);
  if (applied.length > 0) quietLogger.info({ applied }, 'migrations applied');
  let chain: Chain | undefined;
  try {
    chain = overrides.chain ? await openChain(config, quietLogger) : undefined;
  } catch (error) {
    await database.close();
    throw error;
  }
  const redis = config.redisUrl ? createRedis(config.redisUrl, quietLogger) : undefined;
  const limit = config.rateLimitPerMinute;
  const limiter = redis
    ? createRedisRateLimiter(redis, clock, limit)
    : createPostgresRateLimiter(database.db, clock, limit);
  return {
    config,
    database,
    clock,
    logger,
    secrets: new SecretBox(overrides.masterKey ?? loadMasterKey(config, quietLogger)),
    authStamps: redis ? createRedisAuthStamps(redis) : noAuthStamps,
    limiter,
    resolver: overrides.resolver ?? cachedResolver(systemResolver),
    redis,
    chain,
    close: async () => {
      await chain?.close();
      redis?.disconnect();
      await database.close();
    },
  };
}

/** The chain, when this server uses one: the local development chain and/or public networks. */
async function openChain(config: Config, logger: Logger): Promise<Chain | undefined> {
  if (!config.chain && Object.keys(config.rpcUrls).length === 0) return undefined;
  const chain = await createChain({
    local: config.chain,
    localRpcUrl: config.chainRpcUrl,
    gasWalletKeys: config.gasWalletKeys,
    rpcUrls: config.rpcUrls,
    logger,
  });
  for (const network of chain.networks.list()) {
    const { token } = network;
    logger.info(
      {
        network: network.caip2,
        asset: token.address,
        name: token.name,
        version: token.version,
        decimals: token.decimals,
      },
      'chain network ready',
    );
  }
  return chain;
}
