import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import pino from 'pino';
import { buildApp } from '../src/app.ts';
import { type Clock, systemClock } from '../src/core/clock.ts';
import { type AccountCreateInput, createAccount } from '../src/features/accounts/service.ts';
import { setUpChat } from '../src/features/chat/index.ts';
import { createRedisAuthStamps, noAuthStamps } from '../src/platform/auth-stamps.ts';
import { loadConfig } from '../src/platform/config.ts';
import { SecretBox } from '../src/platform/crypto.ts';
import { type DatabaseHandle, openDatabase } from '../src/platform/db/database.ts';
import { migrate } from '../src/platform/db/migrate.ts';
import {
  createPostgresRateLimiter,
  createRedisRateLimiter,
  type RateLimiter,
} from '../src/platform/http/rate-limit.ts';
import type { Resolver } from '../src/platform/net/public-address.ts';

// The test harness: the real app on a real database. Without DATABASE_URL every test process
// shares one in-memory PGlite; with it, every file uses the PostgreSQL server (and must not
// assume an empty database: each test makes its own users and spaces).

const shared = globalThis as unknown as { __tollbookDatabase?: Promise<DatabaseHandle> };

export function sharedDatabase(): Promise<DatabaseHandle> {
  shared.__tollbookDatabase ??= (async () => {
    const handle = await openDatabase({
      databaseUrl: process.env.DATABASE_URL,
      dataDir: 'memory://',
      poolSize: 20,
    });
    await migrate(handle);
    return handle;
  })();
  return shared.__tollbookDatabase;
}

/** Test DNS: names map to fixed addresses; anything else does not resolve. */
export const TEST_DNS: Record<string, string[]> = {
  'hooks.example.com': ['93.184.215.14'],
  'internal.example.com': ['10.0.0.8'],
  'mixed.example.com': ['93.184.215.14', '192.168.1.4'],
  localhost: ['127.0.0.1'],
};
export const testResolver: Resolver = async (hostname) => {
  const addresses = TEST_DNS[hostname];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return addresses;
};

export type HarnessOptions = {
  clock?: Clock;
  env?: Record<string, string>;
  redis?: boolean;
  limiter?: RateLimiter;
  /** Log server errors to stderr (or set TEST_LOG=1): for debugging a test, not for assertions. */
  log?: boolean;
};

export type User = { id: string; email: string; password: string; token: string; csrf: string };
export type Key = { id: string; key: string; webhookSecret: string; spaceId: string };

export type Harness = Awaited<ReturnType<typeof createHarness>>;

export async function createHarness(options: HarnessOptions = {}) {
  const database = await sharedDatabase();
  const clock = options.clock ?? systemClock;
  const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: 'memory://', LOG_LEVEL: 'silent', ...options.env });
  const redis = options.redis ? new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379') : undefined;
  const limiter =
    options.limiter ??
    (redis
      ? createRedisRateLimiter(redis, clock, config.rateLimitPerMinute)
      : createPostgresRateLimiter(database.db, clock, config.rateLimitPerMinute));
  const deps = {
    config,
    database,
    clock,
    logger: options.log || process.env.TEST_LOG === '1' ? pino({ level: 'error' }) : (false as const),
    secrets: new SecretBox(randomBytes(32).toString('hex')),
    authStamps: redis ? createRedisAuthStamps(redis) : noAuthStamps,
    limiter,
    resolver: testResolver,
    redis,
    // The chat feature with its bot when the env names TELEGRAM_BOT_TOKEN (tests reach the bot through it).
    chat: setUpChat(config, { db: database.db, clock }),
  };
  const app: FastifyInstance = await buildApp(deps);
  await app.ready();

  const inject = (
    request: InjectOptions & { key?: string; session?: string },
  ): Promise<LightMyRequestResponse> => {
    const headers: Record<string, string> = { ...(request.headers as Record<string, string> | undefined) };
    if (request.key) headers.authorization = `Bearer ${request.key}`;
    if (request.session) headers.authorization = `Bearer ${request.session}`;
    const { key: _key, session: _session, ...rest } = request;
    return app.inject({ ...rest, headers });
  };

  async function signup(name = 'Test person'): Promise<User> {
    const email = `u-${randomUUID()}@example.com`;
    const password = `pw-${randomUUID()}`;
    const res = await inject({ method: 'POST', url: '/app/api/signup', payload: { email, password, name } });
    if (res.statusCode !== 201) throw new Error(`signup failed: ${res.statusCode} ${res.body}`);
    const body = res.json();
    return { id: body.user.id, email, password, token: body.session_token, csrf: body.csrf_token };
  }

  async function createSpace(owner: User, body: Record<string, unknown> = {}): Promise<string> {
    const res = await inject({
      method: 'POST',
      url: '/app/api/spaces',
      session: owner.token,
      payload: { name: 'Test space', base_currency: 'USD', plan: 'pro', ...body },
    });
    if (res.statusCode !== 201) throw new Error(`space failed: ${res.statusCode} ${res.body}`);
    return res.json().id;
  }

  async function issueKey(owner: User, spaceId: string, body: Record<string, unknown> = {}): Promise<Key> {
    const scopes = (body.scopes as string[] | undefined) ?? [
      'payments',
      'invoices',
      'contacts',
      'accounts',
      'chats',
    ];
    const payload = { name: 'Test key', scopes, ...body };
    const res = await inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/keys`,
      session: owner.token,
      payload,
    });
    if (res.statusCode !== 201) throw new Error(`key failed: ${res.statusCode} ${res.body}`);
    const out = res.json();
    return { id: out.id, key: out.key, webhookSecret: out.webhook_secret, spaceId };
  }

  async function addMember(owner: User, spaceId: string, member: User, role: string) {
    const res = await inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/members`,
      session: owner.token,
      payload: { email: member.email, role },
    });
    if (res.statusCode !== 201) throw new Error(`member failed: ${res.statusCode} ${res.body}`);
  }

  /** An account in a space, made through the accounts service (for keys without the accounts scope). */
  async function makeAccount(spaceId: string, input: Partial<AccountCreateInput> = {}) {
    const caller = {
      spaceId,
      keyId: randomUUID(),
      issuerUserId: randomUUID(),
      scopes: [],
      pushSourceId: null,
    };
    const body = { kind: 'bank' as const, name: 'Main', currency: 'USD', ...input };
    return database.db.transaction().execute((tx) => createAccount(tx, clock, caller, body));
  }

  /** A crypto USDC account on the local chain with an address: takes on-chain and card payments. */
  const makeWallet = (spaceId: string, address = `0x${'1'.repeat(40)}`) =>
    makeAccount(spaceId, { kind: 'crypto', name: 'Wallet', currency: 'USDC', network: 'local', address });

  /** A fresh owner, space and key with the given scopes: the usual start of a test. */
  async function world(keyBody: Record<string, unknown> = {}) {
    const owner = await signup('Owner');
    const spaceId = await createSpace(owner);
    const key = await issueKey(owner, spaceId, keyBody);
    return { owner, spaceId, key };
  }

  return {
    app,
    db: database.db,
    database,
    deps,
    clock,
    inject,
    signup,
    createSpace,
    issueKey,
    addMember,
    makeAccount,
    makeWallet,
    world,
    close: async () => {
      await app.close();
      redis?.disconnect();
    },
  };
}
