import { isIP } from 'node:net';
import { GAS_LOW_WEI, NETWORKS, type NetworkName } from './chain/networks.ts';
import { allowListEntryProblem } from './net/public-address.ts';

// Every setting is read and checked here, once. A bad value stops start-up with a sentence that
// names the variable, rather than failing later somewhere far from the cause.

export type Config = {
  host: string;
  port: number;
  publicUrl: string;
  dataDir: string;
  /** SMTP_URL: where mail goes (smtp:// or smtps://, credentials in the URL). */
  smtpUrl: string | undefined;
  /** MAIL_FROM: the sender of every message. */
  mailFrom: string;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  redisUrl: string | undefined;
  /** Calls per rolling minute per key; the spec's 240 unless an operator (or a benchmark) says otherwise. */
  rateLimitPerMinute: number;
  masterKey: string | undefined;
  production: boolean;
  logLevel: string;
  webhookAllowPrivate: boolean;
  /** WEBHOOK_ALLOW_ADDRESSES: CIDR ranges webhooks may reach although not public (kept in production). */
  webhookAllowList: string[];
  runWorkers: boolean;
  demo: boolean;
  /** CHAIN: start the local development chain (anvil + test USDC); off in production and tests. */
  chain: boolean;
  /** CHAIN_RPC_URL: a running development node to reuse instead of starting anvil. */
  chainRpcUrl: string | undefined;
  /**
   * GAS_WALLET_KEYS (or the single GAS_WALLET_KEY): the keys that pay gas for settlements, one
   * lane each (0x + 64 hex); empty when neither is set.
   */
  gasWalletKeys: readonly `0x${string}`[];
  /** GAS_REPLACE_AFTER_SECONDS: how long a settlement transaction may stay unmined before it is replaced. */
  gasReplaceAfterMs: number;
  /** SETTLEMENT_WAIT_SECONDS: how long a payer waits for a receipt before `settlement_pending`. */
  settlementWaitMs: number;
  /** GAS_LOW_WEI: below this native balance a gas wallet lane is reported as low. */
  gasLowWei: bigint;
  /**
   * BASE_RPC_URL, ETHEREUM_RPC_URL, …: a public network is configured only when its variable is
   * set. Each takes one URL or a comma-separated list of nodes of the same network.
   */
  rpcUrls: Partial<Record<NetworkName, string[]>>;
  /** Per network, the confirmations the account watch waits for. */
  confirmations: Partial<Record<NetworkName, number>>;
  /** METRICS_TOKEN: the bearer token /metrics asks for on the public port (unset: no /metrics there). */
  metricsToken: string | undefined;
  /** METRICS_PORT: a second port, bound to 127.0.0.1, serving /metrics without a token. */
  metricsPort: number | undefined;
  /** STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET: the card rail through Stripe Checkout, set together or not at all. */
  stripe: StripeSettings | undefined;
  /**
   * TRUST_PROXY: which proxies' X-Forwarded-For to believe for the client's address (the login
   * throttles count per address): 1 for any, or a comma list of addresses and CIDR ranges.
   */
  trustProxy: boolean | string;
  /** TELEGRAM_BOT_TOKEN and TELEGRAM_API_ROOT: the chat bot (docs: README "Chat (Telegram)"); unset: no bot. */
  telegram: TelegramSettings | undefined;
  /** SCREENING_LIST_URL, SCREENING_REFRESH_HOURS, SCREENING_MIN_SCORE: the sanctions list and its matching. */
  screening: ScreeningSettings;
};

export type ScreeningSettings = {
  /** Where SDN.XML is fetched from on a schedule (unset: only `tollbook screening load`). */
  listUrl: string | undefined;
  refreshHours: number;
  /** The lowest Jaro–Winkler name score that holds a payment. */
  minScore: number;
};

export type TelegramSettings = {
  token: string;
  /** Another Bot API server (a self-hosted one, or the tests' own); default Telegram's. */
  apiRoot: string;
};

export type StripeSettings = {
  secretKey: string;
  webhookSecret: string;
  /** STRIPE_API_URL: another address for Stripe's API (a stripe-mock, a test server); never in production. */
  apiUrl: string | undefined;
};

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** A configuration that does not load stops the process with its message (exit 2); any other error is thrown on. */
export function exitOnConfigError(error: unknown): never {
  if (error instanceof ConfigError) {
    process.stderr.write(`Tollbook cannot start: ${error.message}\n`);
    process.exit(2);
  }
  throw error;
}

type Env = Record<string, string | undefined>;

function readInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; it is "${raw}".`);
  }
  return Number(raw);
}

function readFlag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be 1 or 0 (true or false); it is "${raw}".`);
}

function readUrl(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL; "${raw.slice(0, 40)}" is not one.`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(
      `${name} must start with ${protocols.join(' or ')}; it starts with ${parsed.protocol}`,
    );
  }
  return raw;
}

/** A comma-separated list of URLs (one is a list too); each must parse, none may repeat. */
function readUrlList(env: Env, name: string, protocols: string[]): string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return [];
  const urls: string[] = [];
  for (const part of raw.split(',')) {
    const url = readUrl({ [name]: part.trim() }, name, protocols);
    if (url === undefined) throw new ConfigError(`${name} has an empty entry in its comma-separated list.`);
    if (urls.includes(url)) throw new ConfigError(`${name} names one node twice.`);
    urls.push(url);
  }
  return urls;
}

/** A comma-separated list of CIDR ranges; each must parse (the address policy says how). */
function readAllowList(env: Env, name: string): string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return [];
  const entries = raw.split(',').map((part) => part.trim());
  for (const entry of entries) {
    const problem = allowListEntryProblem(entry);
    if (problem !== null) throw new ConfigError(`${name} has an entry that is unusable: ${problem}.`);
  }
  return entries;
}

function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url.charCodeAt(end - 1) === 47) end--;
  return url.slice(0, end);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The database the configuration names (a PostgreSQL URL, or embedded PGlite's directory) and its pool's size. */
export function databaseOf(config: Config) {
  return { databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize };
}

export function loadConfig(env: Env = process.env): Config {
  const production = env.NODE_ENV === 'production';
  const port = readInteger(env, 'PORT', 8080, 0, 65535);
  // Loopback unless told otherwise: a development server (with its faucet and demo login) is not
  // offered to the whole network by default; the container image sets HOST=0.0.0.0 itself.
  const host = env.HOST && env.HOST !== '' ? env.HOST : '127.0.0.1';
  const publicUrl = readUrl(env, 'PUBLIC_URL', ['http:', 'https:']) ?? `http://localhost:${port}`;
  const logLevel = env.LOG_LEVEL && env.LOG_LEVEL !== '' ? env.LOG_LEVEL : 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; it is "${logLevel}".`);
  }
  const masterKey = env.MASTER_KEY && env.MASTER_KEY !== '' ? env.MASTER_KEY : undefined;
  if (masterKey !== undefined && !/^[0-9a-fA-F]{64}$/.test(masterKey)) {
    throw new ConfigError('MASTER_KEY must be 64 hexadecimal characters (32 bytes).');
  }
  if (production && masterKey === undefined) {
    throw new ConfigError('MASTER_KEY is required when NODE_ENV=production (64 hexadecimal characters).');
  }
  const webhookAllowPrivate = readFlag(env, 'WEBHOOK_ALLOW_PRIVATE', false);
  if (production && webhookAllowPrivate) {
    throw new ConfigError(
      'WEBHOOK_ALLOW_PRIVATE=1 is a development switch and is refused when NODE_ENV=production.',
    );
  }
  const chainSettings = readChainSettings(env, production);
  return {
    ...chainSettings,
    stripe: readStripeSettings(env, production),
    host,
    port,
    publicUrl: withoutTrailingSlashes(publicUrl),
    dataDir: env.DATA_DIR && env.DATA_DIR !== '' ? env.DATA_DIR : './data',
    databaseUrl: readUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    databasePoolSize: readInteger(env, 'DATABASE_POOL_SIZE', 10, 1, 500),
    redisUrl: readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']),
    rateLimitPerMinute: readInteger(env, 'RATE_LIMIT_PER_MINUTE', 240, 1, 10_000_000),
    masterKey,
    production,
    logLevel,
    webhookAllowPrivate,
    webhookAllowList: readAllowList(env, 'WEBHOOK_ALLOW_ADDRESSES'),
    runWorkers: readFlag(env, 'RUN_WORKERS', true),
    demo: readFlag(env, 'DEMO', !production),
    smtpUrl: readUrl(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom: env.MAIL_FROM && env.MAIL_FROM !== '' ? env.MAIL_FROM : 'Tollbook <no-reply@tollbook.local>',
    ...readMetricsSettings(env),
    telegram: readTelegramSettings(env),
    screening: readScreeningSettings(env),
  };
}

function readScreeningSettings(env: Env): ScreeningSettings {
  const raw = env.SCREENING_MIN_SCORE;
  let minScore = 0.92;
  if (raw !== undefined && raw !== '') {
    if (!/^(0(\.\d+)?|1(\.0+)?)$/.test(raw) || Number(raw) < 0.5) {
      throw new ConfigError(`SCREENING_MIN_SCORE must be a number from 0.5 to 1; it is "${raw}".`);
    }
    minScore = Number(raw);
  }
  return {
    listUrl: readUrl(env, 'SCREENING_LIST_URL', ['http:', 'https:']),
    refreshHours: readInteger(env, 'SCREENING_REFRESH_HOURS', 24, 1, 24 * 30),
    minScore,
  };
}

function readTelegramSettings(env: Env): TelegramSettings | undefined {
  const token = env.TELEGRAM_BOT_TOKEN?.trim();
  if (token === undefined || token === '') return undefined;
  // BotFather's tokens are "<bot id>:<35 characters>"; anything else is a typo worth stopping on.
  if (!/^\d{1,20}:[\w-]{20,100}$/.test(token))
    throw new ConfigError('TELEGRAM_BOT_TOKEN must look like 123456:ABC-DEF… (the token BotFather gave).');
  const apiRoot = readUrl(env, 'TELEGRAM_API_ROOT', ['http:', 'https:']) ?? 'https://api.telegram.org';
  return { token, apiRoot: withoutTrailingSlashes(apiRoot) };
}

const METRICS_TOKEN_MIN = 24;

function readMetricsSettings(env: Env) {
  const metricsToken = env.METRICS_TOKEN && env.METRICS_TOKEN !== '' ? env.METRICS_TOKEN : undefined;
  if (
    metricsToken !== undefined &&
    (metricsToken.length < METRICS_TOKEN_MIN || metricsToken.trim() !== metricsToken)
  ) {
    throw new ConfigError(
      `METRICS_TOKEN must be at least ${METRICS_TOKEN_MIN} characters without surrounding blanks (e.g. openssl rand -hex 24).`,
    );
  }
  const metricsPort =
    env.METRICS_PORT === undefined || env.METRICS_PORT === ''
      ? undefined
      : readInteger(env, 'METRICS_PORT', 0, 1, 65535);
  return { metricsToken, metricsPort, trustProxy: readTrustProxy(env) };
}

function readTrustProxy(env: Env): boolean | string {
  const raw = env.TRUST_PROXY?.trim();
  if (raw === undefined || raw === '' || ['0', 'false', 'no', 'off'].includes(raw.toLowerCase()))
    return false;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  for (const part of raw.split(',')) {
    const [address = '', bits] = part.trim().split('/');
    const valid =
      isIP(address) !== 0 && (bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= 128));
    if (!valid)
      throw new ConfigError(
        `TRUST_PROXY must be 1, 0 or a comma list of addresses and CIDR ranges; "${part.trim()}" is neither.`,
      );
  }
  return raw;
}

const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/;

/**
 * The gas wallet's keys: GAS_WALLET_KEYS (comma-separated, one lane each) or the single
 * GAS_WALLET_KEY. Both set is refused: which of them is meant cannot be told. A bad key is named
 * by its position, never quoted (it is a secret).
 */
function readGasWalletKeys(env: Env): `0x${string}`[] {
  const single = env.GAS_WALLET_KEY && env.GAS_WALLET_KEY !== '' ? env.GAS_WALLET_KEY : undefined;
  const list = env.GAS_WALLET_KEYS && env.GAS_WALLET_KEYS.trim() !== '' ? env.GAS_WALLET_KEYS : undefined;
  if (single !== undefined && list !== undefined)
    throw new ConfigError(
      'Set GAS_WALLET_KEYS or GAS_WALLET_KEY, not both (GAS_WALLET_KEYS may hold one key).',
    );
  if (single !== undefined) {
    if (!PRIVATE_KEY.test(single))
      throw new ConfigError(
        'GAS_WALLET_KEY must be 0x followed by 64 hexadecimal characters (a 32-byte key).',
      );
    return [single as `0x${string}`];
  }
  if (list === undefined) return [];
  const keys = list.split(',').map((part) => part.trim());
  keys.forEach((key, index) => {
    if (!PRIVATE_KEY.test(key))
      throw new ConfigError(
        `GAS_WALLET_KEYS: key ${index + 1} of ${keys.length} must be 0x followed by 64 hexadecimal characters.`,
      );
  });
  const distinct = new Set(keys.map((key) => key.toLowerCase()));
  if (distinct.size !== keys.length)
    throw new ConfigError('GAS_WALLET_KEYS names one key twice: each lane needs a key of its own.');
  return keys as `0x${string}`[];
}

function readWei(env: Env, name: string, fallback: bigint): bigint {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,30}$/.test(raw)) throw new ConfigError(`${name} must be a whole number of wei.`);
  return BigInt(raw);
}

function readChainSettings(env: Env, production: boolean) {
  const chainRpcUrl = readUrl(env, 'CHAIN_RPC_URL', ['http:', 'https:']);
  // Tests start their own chain where they need one; naming a node to reuse switches it on.
  const chain = readFlag(env, 'CHAIN', !production && (chainRpcUrl !== undefined || env.NODE_ENV !== 'test'));
  if (production && (chain || chainRpcUrl !== undefined)) {
    throw new ConfigError(
      'CHAIN and CHAIN_RPC_URL select the development chain and are refused when NODE_ENV=production.',
    );
  }
  const keys = readGasWalletKeys(env);
  const rpcUrls: Partial<Record<NetworkName, string[]>> = {};
  for (const network of NETWORKS) {
    if (network.rpcUrlVariable === undefined) continue;
    const urls = readUrlList(env, network.rpcUrlVariable, ['http:', 'https:']);
    if (urls.length > 0) rpcUrls[network.name] = urls;
  }
  if (production && keys.length === 0 && Object.keys(rpcUrls).length > 0) {
    throw new ConfigError(
      'GAS_WALLET_KEY is required when NODE_ENV=production and a network RPC URL is set (or GAS_WALLET_KEYS).',
    );
  }
  // Blocks a transfer must be under before the account watch books it (<NAME>_CONFIRMATIONS).
  const confirmations: Partial<Record<NetworkName, number>> = {};
  for (const network of NETWORKS) {
    const variable = `${network.name.toUpperCase().replace('-', '_')}_CONFIRMATIONS`;
    confirmations[network.name] = readInteger(env, variable, network.defaultConfirmations, 0, 10_000);
  }
  return {
    chain,
    chainRpcUrl,
    gasWalletKeys: keys,
    gasReplaceAfterMs: readInteger(env, 'GAS_REPLACE_AFTER_SECONDS', 30, 1, 3_600) * 1000,
    settlementWaitMs: readInteger(env, 'SETTLEMENT_WAIT_SECONDS', 60, 1, 600) * 1000,
    gasLowWei: readWei(env, 'GAS_LOW_WEI', GAS_LOW_WEI),
    rpcUrls,
    confirmations,
  };
}

function readStripeSettings(env: Env, production: boolean): StripeSettings | undefined {
  const secretKey = env.STRIPE_SECRET_KEY || undefined;
  const webhookSecret = env.STRIPE_WEBHOOK_SECRET || undefined;
  const apiUrl = readUrl(env, 'STRIPE_API_URL', ['http:', 'https:']);
  if (secretKey === undefined && webhookSecret === undefined) {
    if (apiUrl !== undefined)
      throw new ConfigError('STRIPE_API_URL needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET.');
    return undefined;
  }
  if (secretKey === undefined || webhookSecret === undefined) {
    throw new ConfigError(
      'STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET go together: set both to take cards through Stripe, or neither.',
    );
  }
  // Secret (sk_) or restricted (rk_) keys, test or live; a publishable key (pk_) cannot open sessions.
  if (!/^(sk|rk)_(test|live)_[0-9A-Za-z]{8,250}$/.test(secretKey)) {
    throw new ConfigError(
      'STRIPE_SECRET_KEY must be a Stripe secret or restricted key (sk_live_…, sk_test_…, rk_…).',
    );
  }
  if (!/^whsec_[0-9A-Za-z+/=]{8,250}$/.test(webhookSecret)) {
    throw new ConfigError("STRIPE_WEBHOOK_SECRET must be the endpoint's signing secret (whsec_…).");
  }
  if (production && apiUrl !== undefined) {
    throw new ConfigError(
      'STRIPE_API_URL points the card rail away from Stripe and is refused when NODE_ENV=production.',
    );
  }
  return { secretKey, webhookSecret, apiUrl };
}
