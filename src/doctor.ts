import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import nodemailer from 'nodemailer';
import { BaseError, createPublicClient, formatEther, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { defined } from './core/assert.ts';
import { isGasLow } from './platform/chain/chain.ts';
import { NETWORKS, type NetworkName } from './platform/chain/networks.ts';
import { type Config, databaseOf } from './platform/config.ts';
import { SecretBox } from './platform/crypto.ts';
import { type DatabaseHandle, openDatabase } from './platform/db/database.ts';
import { migrationFiles } from './platform/db/migrate.ts';

// `tollbook doctor`: checks that the configuration works against the world it names and reports
// one line per check. It only reads: it applies no migration, generates no key, creates no
// database. Every outside call is bounded by the same timeout.

export type CheckStatus = 'ok' | 'fail' | 'skip';

export type CheckResult = {
  check: string;
  status: CheckStatus;
  detail: string;
  /** What to do about a failure. */
  fix?: string;
};

export type DoctorOptions = { timeoutMs: number };

const ok = (check: string, detail: string): CheckResult => ({ check, status: 'ok', detail });
const skip = (check: string, detail: string): CheckResult => ({ check, status: 'skip', detail });
const fail = (check: string, detail: string, fix: string): CheckResult => ({
  check,
  status: 'fail',
  detail,
  fix,
});

class OutOfTime extends Error {}

/** Settles with `work`, or rejects with OutOfTime once `timeoutMs` passes without an answer. */
async function within<T>(timeoutMs: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OutOfTime(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function reason(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  // viem's errors: a short sentence, with the transport's own words in `details`.
  const details = (error as { details?: unknown }).details;
  if (error instanceof BaseError)
    message = `${error.shortMessage} ${typeof details === 'string' ? details : ''}`;
  return message.trim().split('\n')[0]?.slice(0, 200) ?? 'unknown error';
}

/** Runs every check; the database checks share one connection, closed before returning. */
export async function runDoctor(config: Config, options: DoctorOptions): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const opened = await openForDoctor(config, options);
  results.push(opened.result);
  try {
    results.push(await checkMigrations(opened.handle, options));
    results.push(await checkMasterKey(config, opened.handle, options));
  } finally {
    await opened.handle?.close();
  }
  results.push(...(await checkNetworks(config, options)));
  results.push(await checkSmtp(config, options));
  results.push(await checkRedis(config, options));
  results.push(checkPublicUrl(config));
  return results;
}

async function openForDoctor(
  config: Config,
  options: DoctorOptions,
): Promise<{ result: CheckResult; handle: DatabaseHandle | undefined }> {
  const where = config.databaseUrl ? redactedUrl(config.databaseUrl) : join(config.dataDir, 'pglite');
  if (!config.databaseUrl && !existsSync(join(config.dataDir, 'pglite'))) {
    const detail = `no embedded database at ${where}`;
    const fix = 'run `tollbook migrate` (or start the server once), or set DATA_DIR or DATABASE_URL';
    return { result: fail('database', detail, fix), handle: undefined };
  }
  let handle: DatabaseHandle | undefined;
  try {
    handle = await within(
      options.timeoutMs,
      openDatabase({
        ...databaseOf(config),
        poolSize: 1,
        timeoutMs: options.timeoutMs,
      }),
    );
    const row = await within(
      options.timeoutMs,
      sql<{ version: string }>`SELECT version()`.execute(handle.db),
    );
    const version = row.rows[0]?.version.split(' ').slice(0, 2).join(' ') ?? 'unknown version';
    return { result: ok('database', `${version} at ${where}`), handle };
  } catch (error) {
    await handle?.close();
    const fix = config.databaseUrl
      ? 'check DATABASE_URL (host, port, database, user) and that PostgreSQL is running'
      : 'stop the server using this DATA_DIR (embedded PGlite opens in one process) and retry';
    return { result: fail('database', `${where}: ${reason(error)}`, fix), handle: undefined };
  }
}

function redactedUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

async function checkMigrations(handle: DatabaseHandle | undefined, options: DoctorOptions) {
  if (!handle) return skip('migrations', 'not checked: the database is not reachable');
  try {
    const table = await within(
      options.timeoutMs,
      sql<{ present: boolean }>`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`.execute(
        handle.db,
      ),
    );
    const applied = new Set<string>();
    if (table.rows[0]?.present) {
      const rows = await within(
        options.timeoutMs,
        sql<{ name: string }>`SELECT name FROM schema_migrations`.execute(handle.db),
      );
      for (const row of rows.rows) applied.add(row.name);
    }
    const pending = migrationFiles().filter((name) => !applied.has(name));
    if (pending.length === 0) return ok('migrations', `all ${applied.size} applied`);
    const shown = pending.slice(0, 3).join(', ') + (pending.length > 3 ? ', …' : '');
    return fail('migrations', `${pending.length} pending (${shown})`, 'run `tollbook migrate`');
  } catch (error) {
    return fail('migrations', reason(error), 'check that the database user may read schema_migrations');
  }
}

/** MASTER_KEY, else the development key the server keeps in DATA_DIR (never generated here). */
function masterKeyOf(config: Config): { key: string; source: string } | undefined {
  if (config.masterKey) return { key: config.masterKey, source: 'MASTER_KEY' };
  const path = join(config.dataDir, 'master.key');
  if (!config.production && existsSync(path))
    return { key: readFileSync(path, 'utf8').trim(), source: `the development key ${path}` };
  return undefined;
}

async function checkMasterKey(config: Config, handle: DatabaseHandle | undefined, options: DoctorOptions) {
  const found = masterKeyOf(config);
  if (!found)
    return fail(
      'master key',
      'MASTER_KEY is not set and there is no development key',
      'set MASTER_KEY to 64 hexadecimal characters (openssl rand -hex 32) and keep it with your backups',
    );
  if (!handle) return skip('master key', `${found.source} is set; not opened: the database is not reachable`);
  try {
    const rows = await within(
      options.timeoutMs,
      sql<{ sealed: string }>`
        (SELECT webhook_secret_sealed AS sealed FROM integration_keys ORDER BY created_at DESC LIMIT 1)
        UNION ALL
        (SELECT secret_sealed AS sealed FROM webhook_subscriptions ORDER BY created_at DESC LIMIT 1)`.execute(
        handle.db,
      ),
    );
    const sealed = rows.rows[0]?.sealed;
    if (sealed === undefined) return ok('master key', `${found.source} is set; no sealed secret to open yet`);
    new SecretBox(found.key).open(sealed);
    return ok('master key', `${found.source} opens the sealed secrets`);
  } catch (error) {
    return fail(
      'master key',
      `${found.source} does not open a sealed secret in this database (${reason(error)})`,
      'set MASTER_KEY to the key this database was written with',
    );
  }
}

async function checkNetworks(config: Config, options: DoctorOptions): Promise<CheckResult[]> {
  const names = Object.keys(config.rpcUrls) as NetworkName[];
  if (names.length === 0) return [skip('networks', 'no network RPC URL is set (BASE_RPC_URL, …)')];
  const results: CheckResult[] = [];
  // Each node of a network's list is checked on its own: a fallback hides a dead node until the
  // last one dies.
  for (const name of names) {
    const urls = config.rpcUrls[name] ?? [];
    for (const [index, rpcUrl] of urls.entries()) {
      const label = urls.length > 1 ? `${name} (node ${index + 1})` : name;
      results.push(...(await checkNetwork(config, name, label, rpcUrl, options)));
    }
  }
  return results;
}

async function checkNetwork(
  config: Config,
  name: NetworkName,
  label: string,
  rpcUrl: string,
  options: DoctorOptions,
) {
  const definition = defined(
    NETWORKS.find((candidate) => candidate.name === name),
    `the network ${name}`,
  );
  const client = createPublicClient({
    transport: http(rpcUrl, { timeout: options.timeoutMs, retryCount: 0 }),
  });
  const variable = definition.rpcUrlVariable ?? 'the RPC URL';
  const check = `network ${label}`;
  let rpc: CheckResult;
  try {
    const chainId = await within(options.timeoutMs, client.getChainId());
    if (chainId !== definition.chainId) {
      rpc = fail(
        check,
        `${variable} answers chain id ${chainId}, not ${definition.chainId}`,
        `point ${variable} at a ${name} node`,
      );
    } else if (definition.usdc === undefined) {
      rpc = ok(check, `chain id ${chainId}`);
    } else {
      const code = await within(options.timeoutMs, client.getCode({ address: definition.usdc }));
      rpc =
        code === undefined || code === '0x'
          ? fail(
              check,
              `chain id ${chainId}, but no contract at USDC ${definition.usdc}`,
              `point ${variable} at a ${name} node (this one is another chain or not synced)`,
            )
          : ok(check, `chain id ${chainId}, USDC ${definition.usdc} has code`);
    }
  } catch (error) {
    rpc = fail(
      check,
      `${variable}: ${reason(error)}`,
      `check ${variable} and that the node answers JSON-RPC`,
    );
  }
  if (rpc.status !== 'ok') return [rpc, skip(`gas wallet ${label}`, 'not checked: the RPC check failed')];
  return [rpc, ...(await checkGasWallet(config, label, client, options))];
}

/** Each gas wallet lane's balance on one network: a lane below GAS_LOW_WEI fails its check. */
async function checkGasWallet(
  config: Config,
  name: string,
  client: ReturnType<typeof createPublicClient>,
  options: DoctorOptions,
): Promise<CheckResult[]> {
  if (config.gasWalletKeys.length === 0)
    return [
      fail(
        `gas wallet ${name}`,
        'GAS_WALLET_KEYS (or GAS_WALLET_KEY) is not set',
        'set GAS_WALLET_KEYS: settlements on this network pay gas from it',
      ),
    ];
  const results: CheckResult[] = [];
  for (const [index, key] of config.gasWalletKeys.entries()) {
    const check = index === 0 ? `gas wallet ${name}` : `gas wallet ${name} lane ${index + 1}`;
    results.push(await checkLane(check, privateKeyToAccount(key).address, config.gasLowWei, client, options));
  }
  return results;
}

async function checkLane(
  check: string,
  address: `0x${string}`,
  lowWei: bigint,
  client: ReturnType<typeof createPublicClient>,
  options: DoctorOptions,
): Promise<CheckResult> {
  try {
    const wei = await within(options.timeoutMs, client.getBalance({ address }));
    const shown = `${address} holds ${formatEther(wei)}`;
    if (isGasLow(wei, lowWei))
      return fail(
        check,
        `${shown}, below ${formatEther(lowWei)}`,
        `send the native coin for gas to ${address}`,
      );
    return ok(check, `${shown} (at least ${formatEther(lowWei)})`);
  } catch (error) {
    return fail(check, reason(error), 'retry; the node did not answer the balance');
  }
}

async function checkSmtp(config: Config, options: DoctorOptions): Promise<CheckResult> {
  if (!config.smtpUrl) return skip('smtp', 'SMTP_URL is not set: mail is not sent');
  const transport = nodemailer.createTransport({
    url: config.smtpUrl,
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
  });
  try {
    await within(options.timeoutMs, transport.verify());
    return ok('smtp', `${redactedUrl(config.smtpUrl)} answers EHLO`);
  } catch (error) {
    return fail(
      'smtp',
      `${redactedUrl(config.smtpUrl)}: ${reason(error)}`,
      'check SMTP_URL (host, port, smtps:// for TLS, credentials)',
    );
  } finally {
    transport.close();
  }
}

async function checkRedis(config: Config, options: DoctorOptions): Promise<CheckResult> {
  if (!config.redisUrl) return skip('redis', 'REDIS_URL is not set: limits and sessions use the database');
  const redis = new Redis(config.redisUrl, {
    lazyConnect: true,
    connectTimeout: options.timeoutMs,
    commandTimeout: options.timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    enableReadyCheck: false,
    retryStrategy: () => null,
  });
  let lastError: unknown;
  redis.on('error', (error) => {
    lastError = error;
  });
  try {
    await within(options.timeoutMs, redis.connect());
    const answer = await within(options.timeoutMs, redis.ping());
    return answer === 'PONG'
      ? ok('redis', `${redactedUrl(config.redisUrl)} answers PING`)
      : fail('redis', `PING answered ${answer}`, 'check that REDIS_URL names a Redis server');
  } catch (error) {
    return fail(
      'redis',
      `${redactedUrl(config.redisUrl)}: ${reason(lastError ?? error)}`,
      'check REDIS_URL and that Redis is running',
    );
  } finally {
    redis.disconnect();
  }
}

function checkPublicUrl(config: Config): CheckResult {
  const https = config.publicUrl.startsWith('https://');
  if (https) return ok('public url', config.publicUrl);
  if (!config.production) return ok('public url', `${config.publicUrl} (http is fine outside production)`);
  return fail(
    'public url',
    `${config.publicUrl} is not https`,
    'set PUBLIC_URL to the https address of your TLS proxy (docs/deploy.md)',
  );
}

/** One line per check: status, name, what was found, and for a failure what to do. */
export function formatReport(results: CheckResult[]): string {
  const width = Math.max(...results.map((result) => result.check.length));
  const lines = results.map((result) => {
    const mark = { ok: 'ok  ', fail: 'FAIL', skip: 'skip' }[result.status];
    const fix = result.fix ? ` (fix: ${result.fix})` : '';
    return `${mark}  ${result.check.padEnd(width)}  ${result.detail}${fix}`;
  });
  const failed = results.filter((result) => result.status === 'fail').length;
  lines.push(failed === 0 ? 'All checks passed.' : `${failed} check(s) failed.`);
  return `${lines.join('\n')}\n`;
}
