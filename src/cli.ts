import { parseArgs } from 'node:util';
import { AppError } from './core/errors.ts';
import { runAgentMcpStdio } from './features/agents/index.ts';
import { issueKey, revokeKey } from './features/keys/index.ts';
import { checkLedger } from './features/ledger/index.ts';
import { loadScreeningList } from './features/screening/index.ts';
import { createSpace } from './features/spaces/index.ts';
import { createUser } from './features/users/index.ts';
import {
  readStandardInput,
  replayCommand,
  runWorkerCommand,
  tailDeliveries,
  verifyCommand,
} from './features/webhooks/index.ts';
import { exitOnConfigError, runServer } from './main.ts';
import { ConfigError, loadConfig } from './platform/config.ts';
import { migrate } from './platform/db/migrate.ts';
import { SCOPES, type Scope } from './platform/http/context.ts';
import { createRuntime, type Runtime } from './runtime.ts';

// The `tollbook` command. Every subcommand reads the same configuration as the server
// (DATABASE_URL or DATA_DIR, MASTER_KEY, ...), so it acts on the same database.

const USAGE = `Usage: tollbook <command>

  serve                         Start the HTTP server and background tasks (same as npm start)
  worker                        Run only the background workers (webhook delivery), no HTTP
  migrate                       Apply pending database migrations and exit
  spaces create --name NAME --owner-email EMAIL [--currency USD] [--plan free|starter|pro|scale|enterprise]
                                Create a space (and its owner, if the email is new: a password is printed)
  keys issue --space ID --owner-email EMAIL --name NAME --scopes a,b [--webhook-url URL]
             [--push-source NAME] [--lifetime-days 30|90|180|365]
                                Issue an integration key as that owner or admin; prints key and secret once
  keys revoke --space ID --key KEY_ID --owner-email EMAIL
                                Revoke a key; every server refuses it from its next call
  ledger check [--space ID]     Verify every entry balances and every cached balance equals its
                                postings; exits 1 when anything is off
  screening load FILE           Load OFAC's SDN.XML as the sanctions list payments out are screened
                                against (replaces the current list; see README "Sanctions screening")
  mcp                           Serve the agent API as MCP tools over stdio, as the agent whose
                                oat_ token is TOLLBOOK_AGENT_TOKEN, calling the server at
                                TOLLBOOK_URL (default PUBLIC_URL, else http://127.0.0.1:8080)
  webhooks tail --space ID      Print the space's webhook deliveries as they happen (Ctrl-C stops)
  webhooks replay --space ID (--event-id ID | --since TIME)
                                Send again, now, the deliveries of one event or of every event since
                                TIME (ISO 8601), on both channels, with their original event ids
  webhooks verify --secret S[,S2] --signature sha256=HEX < body
  webhooks verify --secret S[,S2] --signature 'v1,B64 ...' --webhook-id ID --timestamp T < body
                                Check a webhook signature (the spec's or Standard Webhooks') against
                                the raw body on standard input, under any of the secrets

Configuration comes from the environment; see README.md.`;

type Options = Record<string, string | undefined>;

function need(options: Options, name: string): string {
  const value = options[name];
  if (value === undefined || value === '') throw new UsageError(`--${name} is required.`);
  return value;
}

class UsageError extends Error {}

async function userIdFor(runtime: Runtime, email: string): Promise<string> {
  const row = await runtime.database.db
    .selectFrom('users')
    .select('id')
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst();
  if (!row) throw new UsageError(`No user with the email ${email}.`);
  return row.id;
}

function keysDeps(runtime: Runtime) {
  return {
    db: runtime.database.db,
    clock: runtime.clock,
    secrets: runtime.secrets,
    authStamps: runtime.authStamps,
    resolver: runtime.resolver,
    webhookAllowPrivate: runtime.config.webhookAllowPrivate,
  };
}

async function spacesCreate(runtime: Runtime, options: Options) {
  const email = need(options, 'owner-email');
  const db = runtime.database.db;
  let ownerId: string;
  try {
    ownerId = await userIdFor(runtime, email);
  } catch {
    const password = (await import('node:crypto')).randomBytes(12).toString('base64url');
    ownerId = (
      await createUser({ db, clock: runtime.clock }, { email, password, name: email.split('@')[0] ?? email })
    ).id;
    process.stdout.write(`Created user ${email} with password ${password}\n`);
  }
  const plan = options.plan as 'free' | 'starter' | 'pro' | 'scale' | 'enterprise' | undefined;
  const space = await createSpace({ db, clock: runtime.clock, authStamps: runtime.authStamps }, ownerId, {
    name: need(options, 'name'),
    base_currency: options.currency ?? 'USD',
    plan,
  });
  process.stdout.write(`${JSON.stringify(space, null, 2)}\n`);
}

async function keysIssue(runtime: Runtime, options: Options) {
  const scopes = need(options, 'scopes')
    .split(',')
    .map((scope) => scope.trim());
  const unknown = scopes.filter((scope) => !(SCOPES as readonly string[]).includes(scope));
  if (unknown.length > 0)
    throw new UsageError(`Unknown scopes: ${unknown.join(', ')}. Known: ${SCOPES.join(', ')}.`);
  const lifetime = options['lifetime-days'] ? Number(options['lifetime-days']) : undefined;
  const issued = await issueKey(
    keysDeps(runtime),
    await userIdFor(runtime, need(options, 'owner-email')),
    need(options, 'space'),
    {
      name: need(options, 'name'),
      scopes: scopes as Scope[],
      webhook_url: options['webhook-url'] ?? null,
      push_source: options['push-source'],
      lifetime_days: lifetime as 30 | 90 | 180 | 365 | undefined,
    },
  );
  process.stdout.write(
    `${JSON.stringify(issued, null, 2)}\nThe key and the webhook secret are shown only now.\n`,
  );
}

async function keysRevoke(runtime: Runtime, options: Options) {
  const actor = await userIdFor(runtime, need(options, 'owner-email'));
  const revoked = await revokeKey(keysDeps(runtime), actor, need(options, 'space'), need(options, 'key'));
  process.stdout.write(`${JSON.stringify(revoked, null, 2)}\n`);
}

async function webhooksTail(runtime: Runtime, options: Options) {
  let stop = false;
  process.once('SIGINT', () => {
    stop = true;
  });
  const deps = { db: runtime.database.db, now: () => runtime.clock.now() };
  await tailDeliveries(deps, need(options, 'space'), { out: process.stdout, shouldStop: () => stop });
}

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The replay's arguments, checked before any database is opened. */
function replaySelection(options: Options) {
  const eventId = options['event-id'];
  const sinceText = options.since;
  if ((eventId === undefined) === (sinceText === undefined))
    throw new UsageError('Give exactly one of --event-id and --since.');
  if (eventId !== undefined && !UUID_SHAPE.test(eventId))
    throw new UsageError('--event-id must be an event id (a UUID).');
  const since = sinceText === undefined ? undefined : new Date(sinceText);
  if (since !== undefined && (!/^\d{4}-\d{2}-\d{2}/.test(sinceText!) || Number.isNaN(since.getTime())))
    throw new UsageError('--since must be an ISO 8601 time, e.g. 2026-11-24T09:00:00Z.');
  const space = need(options, 'space');
  if (!UUID_SHAPE.test(space)) throw new UsageError('--space must be a space id (a UUID).');
  return { space, eventId, since };
}

/** A usage mistake found before any database is opened (so the command fails at once). */
function usageProblem(command: string, options: Options): string | undefined {
  if (command !== 'webhooks replay') return undefined;
  try {
    replaySelection(options);
    return undefined;
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
}

async function webhooksReplay(runtime: Runtime, options: Options) {
  const { space, eventId, since } = replaySelection(options);
  await replayCommand(runtime, space, { eventId, since }, process.stdout);
}

class CheckFailed extends Error {}

async function ledgerCheck(runtime: Runtime, options: Options) {
  const report = await checkLedger(runtime.database.db, options.space);
  const lines = [
    `entries that do not balance: ${report.unbalanced.length}`,
    `entries with fewer than two postings: ${report.empty.length}`,
    `cached balances that differ from their postings: ${report.drifted.length}`,
    `prepaid balances below zero: ${report.overdrawn.length}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (!report.sound) {
    process.stdout.write(
      `${JSON.stringify({ unbalanced: report.unbalanced, empty: report.empty, drifted: report.drifted, overdrawn: report.overdrawn }, null, 2)}\n`,
    );
    throw new CheckFailed('The ledger check found problems.');
  }
  process.stdout.write('The ledger is sound.\n');
}

async function screeningLoad(runtime: Runtime, options: Options) {
  const file = need(options, 'file');
  const { readFile } = await import('node:fs/promises');
  let xml: string;
  try {
    xml = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read ${file}: ${(error as Error).message}`);
  }
  const loaded = await loadScreeningList({ db: runtime.database.db, clock: runtime.clock }, xml, file);
  if (!loaded.ok) throw new UsageError(loaded.problem);
  process.stdout.write(
    `Loaded the list published ${loaded.publishedOn || '(no date)'}: ${loaded.sdnEntries} SDN entries, ` +
      `${loaded.entries} names and addresses to screen against.\n`,
  );
}

const COMMANDS: Record<string, (runtime: Runtime, options: Options) => Promise<void>> = {
  'ledger check': ledgerCheck,
  'screening load': screeningLoad,
  'spaces create': spacesCreate,
  'keys issue': keysIssue,
  'keys revoke': keysRevoke,
  'webhooks tail': webhooksTail,
  'webhooks replay': webhooksReplay,
};

/** The options every command may take (each as text). */
const OPTION_NAMES = [
  'name',
  'owner-email',
  'currency',
  'plan',
  'space',
  'scopes',
  'webhook-url',
  'push-source',
  'lifetime-days',
  'key',
  'secret',
  'signature',
  'webhook-id',
  'timestamp',
  'event-id',
  'since',
];

export async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: Object.fromEntries(OPTION_NAMES.map((name) => [name, { type: 'string' as const }])),
    });
  } catch (error) {
    process.stderr.write(`tollbook: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { positionals, values } = parsed;
  const command = positionals.slice(0, 2).join(' ');
  if (positionals[0] === 'serve') {
    await runServer();
    return -1;
  }
  if (positionals[0] === 'mcp') return runAgentMcp();
  if (positionals[0] === 'worker') {
    await runWorkerCommand(async () => createRuntime(loadConfig()).catch(exitOnConfigError));
    return -1;
  }
  if (command === 'webhooks verify') {
    const { secret, signature, 'webhook-id': id, timestamp } = values as Options;
    if (!secret || !signature) {
      process.stderr.write('tollbook: --secret and --signature are required.\n');
      return 2;
    }
    const body = await readStandardInput();
    return verifyCommand(secret, signature, body, process.stdout, { id, timestamp });
  }
  const run = positionals[0] === 'migrate' ? undefined : COMMANDS[command];
  if (positionals[0] !== 'migrate' && run === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return positionals.length === 0 || positionals[0] === 'help' ? 0 : 2;
  }
  const early = usageProblem(command, values as Options);
  if (early) {
    process.stderr.write(`tollbook: ${early}\n`);
    return 2;
  }
  let runtime: Runtime;
  try {
    runtime = await createRuntime(loadConfig(), { logger: false });
  } catch (error) {
    if (error instanceof ConfigError) exitOnConfigError(error);
    throw error;
  }
  try {
    if (run === undefined) {
      const applied = await migrate(runtime.database);
      process.stdout.write(
        applied.length > 0 ? `Applied: ${applied.join(', ')}\n` : 'The database is up to date.\n',
      );
    } else {
      await run(runtime, { ...(values as Options), file: positionals[2] });
    }
    return 0;
  } catch (error) {
    if (error instanceof CheckFailed) return 1;
    if (error instanceof UsageError || error instanceof AppError) {
      process.stderr.write(`tollbook: ${error.message}\n`);
      return 2;
    }
    throw error;
  } finally {
    await runtime.close();
  }
}

/** `tollbook mcp`: runs until stdin closes; answers -1 so main does not exit under it. */
async function runAgentMcp(): Promise<number> {
  const token = process.env.TOLLBOOK_AGENT_TOKEN;
  if (!token) {
    process.stderr.write('tollbook: set TOLLBOOK_AGENT_TOKEN to the agent’s oat_ token.\n');
    return 2;
  }
  const url = process.env.TOLLBOOK_URL ?? process.env.PUBLIC_URL ?? 'http://127.0.0.1:8080';
  await runAgentMcpStdio(url, token);
  return -1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const code = await main(process.argv.slice(2));
  if (code >= 0) process.exit(code);
}
