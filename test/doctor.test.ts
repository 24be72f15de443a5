import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CheckResult, runDoctor } from '../src/doctor.ts';
import { issueKey } from '../src/features/keys/index.ts';
import { createSpace } from '../src/features/spaces/index.ts';
import { createUser } from '../src/features/users/index.ts';
import { GAS_LOW_WEI } from '../src/platform/chain/chain.ts';
import { loadConfig } from '../src/platform/config.ts';
import { openDatabase } from '../src/platform/db/database.ts';
import { createRuntime } from '../src/runtime.ts';
import { type CommandDatabase, freshCommandDatabase } from './support/command-database.ts';

// A loopback world for `tollbook doctor`: a database with a sealed secret (embedded, or a fresh
// one on the suite's PostgreSQL when the suite runs there), a JSON-RPC node, an SMTP server and a
// Redis stand-in, all on 127.0.0.1. The healthy world passes every
// check; each scenario then breaks one thing, and exactly that check fails.

const BASE_CHAIN_ID = 8453;
const TIMEOUT_MS = 1500;

type Node = { chainId: number; usdcCode: string; balanceWei: bigint; silent: boolean };
const node: Node = { chainId: BASE_CHAIN_ID, usdcCode: '0x6080', balanceWei: GAS_LOW_WEI, silent: false };

let dataDir: string;
let database: CommandDatabase;
/** DATABASE_URL for the doctor's database: none with embedded PGlite in DATA_DIR. */
const databaseEnv = (): Record<string, string> => (database.url ? { DATABASE_URL: database.url } : {});
let rpc: HttpServer;
let smtp: SMTPServer;
let redis: TcpServer;
let silent: TcpServer;
let closedPort: number;
const sockets = new Set<Socket>();
const ports = { rpc: 0, smtp: 0, redis: 0, silent: 0 };

function listen(server: HttpServer | TcpServer): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
}

function startRpc(): HttpServer {
  return createHttpServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      if (node.silent) return; // never answers; the doctor's timeout must end the call
      const call = JSON.parse(body) as { id: number; method: string };
      const results: Record<string, string> = {
        eth_chainId: `0x${node.chainId.toString(16)}`,
        eth_getCode: node.usdcCode,
        eth_getBalance: `0x${node.balanceWei.toString(16)}`,
      };
      const result = results[call.method];
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify(
          result === undefined
            ? { jsonrpc: '2.0', id: call.id, error: { code: -32601, message: 'method not found' } }
            : { jsonrpc: '2.0', id: call.id, result },
        ),
      );
    });
  });
}

/**
 * A Redis stand-in speaking RESP: PING answers PONG, any other command (the client's own
 * CLIENT SETINFO on connect) answers OK. Commands arrive whole on loopback.
 */
function startRedis(): TcpServer {
  return createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('data', (data) => {
      const lines = data.toString('utf8').split('\r\n');
      for (let index = 0; index < lines.length; index++) {
        const count = /^\*(\d+)$/.exec(lines[index] ?? '');
        if (!count) continue;
        const name = (lines[index + 2] ?? '').toUpperCase();
        socket.write(name === 'PING' ? '+PONG\r\n' : '+OK\r\n');
        index += 2 * Number(count[1]);
      }
    });
    socket.on('error', () => socket.destroy());
  });
}

/** Accepts connections and never says a word (a hung server). */
function startSilent(): TcpServer {
  return createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => socket.destroy());
  });
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'tollbook-doctor-'));
  database = await freshCommandDatabase();
  const runtime = await createRuntime(
    loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...databaseEnv() }),
    {
      logger: false,
    },
  );
  try {
    const db = runtime.database.db;
    const owner = await createUser(
      { db, clock: runtime.clock },
      { email: 'doctor@example.com', password: 'correct horse battery', name: 'doc' },
    );
    const space = await createSpace({ db, clock: runtime.clock, authStamps: runtime.authStamps }, owner.id, {
      name: 'Doctor',
      base_currency: 'USD',
      plan: undefined,
    });
    await issueKey(
      {
        db,
        clock: runtime.clock,
        secrets: runtime.secrets,
        authStamps: runtime.authStamps,
        resolver: runtime.resolver,
        webhookAllowPrivate: false,
      },
      owner.id,
      space.id,
      {
        name: 'k',
        scopes: ['payments'],
        webhook_url: null,
        push_source: undefined,
        lifetime_days: undefined,
      },
    );
  } finally {
    await runtime.close();
  }
  rpc = startRpc();
  smtp = new SMTPServer({ authOptional: true, disabledCommands: ['STARTTLS'] });
  redis = startRedis();
  silent = startSilent();
  ports.rpc = await listen(rpc);
  ports.smtp = await new Promise<number>((resolve) =>
    smtp.listen(0, '127.0.0.1', () => resolve((smtp.server.address() as { port: number }).port)),
  );
  ports.redis = await listen(redis);
  ports.silent = await listen(silent);
  const probe = createTcpServer();
  closedPort = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));
}, 180_000);

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  rpc?.closeAllConnections();
  await Promise.all([
    new Promise((resolve) => rpc?.close(resolve)),
    new Promise((resolve) => smtp?.close(() => resolve(undefined))),
    new Promise((resolve) => redis?.close(resolve)),
    new Promise((resolve) => silent?.close(resolve)),
  ]);
  await database?.drop();
});

const GAS_WALLET_KEY = `0x${'11'.repeat(32)}`;

function healthyEnv(): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    ...databaseEnv(),
    LOG_LEVEL: 'silent',
    BASE_RPC_URL: `http://127.0.0.1:${ports.rpc}/`,
    GAS_WALLET_KEY,
    SMTP_URL: `smtp://127.0.0.1:${ports.smtp}`,
    REDIS_URL: `redis://127.0.0.1:${ports.redis}`,
  };
}

async function doctor(env: Record<string, string>): Promise<CheckResult[]> {
  return runDoctor(loadConfig(env), { timeoutMs: TIMEOUT_MS });
}

const failing = (results: CheckResult[]) =>
  results.filter((result) => result.status === 'fail').map((result) => result.check);

describe('tollbook doctor', () => {
  it('passes every check in a healthy world: database, migrations, key, network, gas, SMTP, Redis, URL', async () => {
    const results = await doctor(healthyEnv());
    expect(failing(results)).toEqual([]);
    expect(results.map((result) => [result.check, result.status])).toEqual([
      ['database', 'ok'],
      ['migrations', 'ok'],
      ['master key', 'ok'],
      ['network base', 'ok'],
      ['gas wallet base', 'ok'],
      ['smtp', 'ok'],
      ['redis', 'ok'],
      ['public url', 'ok'],
    ]);
    expect(results.find((result) => result.check === 'master key')?.detail).toContain(
      'opens the sealed secrets',
    );
  }, 60_000);

  it('fails the database check (and skips what needs it) when PostgreSQL does not answer', async () => {
    const results = await doctor({
      ...healthyEnv(),
      DATABASE_URL: `postgres://postgres@127.0.0.1:${closedPort}/none`,
      MASTER_KEY: 'ab'.repeat(32),
    });
    expect(failing(results)).toEqual(['database']);
    expect(results.find((result) => result.check === 'database')?.fix).toMatch(/DATABASE_URL/);
    expect(results.find((result) => result.check === 'migrations')?.status).toBe('skip');
  }, 60_000);

  it('fails the migrations check when one is not applied, naming it and `tollbook migrate`', async () => {
    const handle = await openDatabase({ dataDir, databaseUrl: database.url || undefined });
    const last = await sql<{ name: string }>`SELECT max(name) AS name FROM schema_migrations`.execute(
      handle.db,
    );
    const name = last.rows[0]!.name;
    await sql`DELETE FROM schema_migrations WHERE name = ${name}`.execute(handle.db);
    await handle.close();
    try {
      const results = await doctor(healthyEnv());
      expect(failing(results)).toEqual(['migrations']);
      const migrations = results.find((result) => result.check === 'migrations')!;
      expect(migrations.detail).toContain(name);
      expect(migrations.fix).toContain('tollbook migrate');
    } finally {
      const again = await openDatabase({ dataDir, databaseUrl: database.url || undefined });
      await sql`INSERT INTO schema_migrations (name) VALUES (${name})`.execute(again.db);
      await again.close();
    }
  }, 60_000);

  it('fails the master key check when MASTER_KEY cannot open the sealed secrets', async () => {
    const results = await doctor({ ...healthyEnv(), MASTER_KEY: randomBytes(32).toString('hex') });
    expect(failing(results)).toEqual(['master key']);
  }, 60_000);

  it('fails the network check when the RPC answers another chain id', async () => {
    node.chainId = 1;
    try {
      const results = await doctor(healthyEnv());
      expect(failing(results)).toEqual(['network base']);
      expect(results.find((result) => result.check === 'network base')?.detail).toContain(
        'chain id 1, not 8453',
      );
    } finally {
      node.chainId = BASE_CHAIN_ID;
    }
  }, 60_000);

  it('fails the network check when the USDC address has no code', async () => {
    node.usdcCode = '0x';
    try {
      const results = await doctor(healthyEnv());
      expect(failing(results)).toEqual(['network base']);
      expect(results.find((result) => result.check === 'network base')?.detail).toContain(
        'no contract at USDC',
      );
    } finally {
      node.usdcCode = '0x6080';
    }
  }, 60_000);

  it('fails the gas wallet check when its balance is below the threshold', async () => {
    node.balanceWei = GAS_LOW_WEI - 1n;
    try {
      const results = await doctor(healthyEnv());
      expect(failing(results)).toEqual(['gas wallet base']);
    } finally {
      node.balanceWei = GAS_LOW_WEI;
    }
  }, 60_000);

  it('fails the SMTP check when nothing answers at SMTP_URL', async () => {
    const results = await doctor({ ...healthyEnv(), SMTP_URL: `smtp://127.0.0.1:${closedPort}` });
    expect(failing(results)).toEqual(['smtp']);
  }, 60_000);

  it('fails the Redis check when nothing answers at REDIS_URL', async () => {
    const results = await doctor({ ...healthyEnv(), REDIS_URL: `redis://127.0.0.1:${closedPort}` });
    expect(failing(results)).toEqual(['redis']);
  }, 60_000);

  it('fails the public URL check when production serves on http', async () => {
    const key = readFileSync(join(dataDir, 'master.key'), 'utf8').trim();
    const results = await doctor({
      ...healthyEnv(),
      NODE_ENV: 'production',
      MASTER_KEY: key,
      PUBLIC_URL: 'http://pay.example.com',
    });
    expect(failing(results)).toEqual(['public url']);
    const https = await doctor({
      ...healthyEnv(),
      NODE_ENV: 'production',
      MASTER_KEY: key,
      PUBLIC_URL: 'https://pay.example.com',
    });
    expect(failing(https)).toEqual([]);
  }, 60_000);

  it('ends every outside call at its timeout when the peers accept and never answer', async () => {
    node.silent = true;
    try {
      const results = await doctor({
        ...healthyEnv(),
        SMTP_URL: `smtp://127.0.0.1:${ports.silent}`,
        REDIS_URL: `redis://127.0.0.1:${ports.silent}`,
      });
      expect(failing(results)).toEqual(['network base', 'smtp', 'redis']);
      for (const check of ['network base', 'smtp', 'redis'])
        expect(results.find((result) => result.check === check)?.detail).toMatch(
          /within|too long|never|timed out/i,
        );
    } finally {
      node.silent = false;
    }
  }, 60_000);
});
