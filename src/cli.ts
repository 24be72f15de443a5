import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { defined } from './core/assert.ts';
import { AppError } from './core/errors.ts';
import type { LedgerReport } from './features/ledger/index.ts';
import { type Config, ConfigError, databaseOf, exitOnConfigError, loadConfig } from './platform/config.ts';
import { SCOPES, type Scope } from './platform/http/context.ts';
import type { Runtime } from './runtime.ts';

// The `tollbook` command. Every subcommand reads the same configuration as the server
// (DATABASE_URL or DATA_DIR, MASTER_KEY, ...), so it acts on the same database. A command loads
// the modules it runs when it runs: help, the version and a refused command load none of them.

/** Each command: how it is called, and what it does (the usage lists them in this order). */
const COMMAND_HELP: { name: string; synopsis: string; summary: string }[] = [
  { name: 'serve', synopsis: '', summary: 'Start the HTTP server and background tasks (same as npm start)' },
  { name: 'worker', synopsis: '', summary: 'Run only the background workers (webhook delivery), no HTTP' },
  { name: 'migrate', synopsis: '', summary: 'Apply pending database migrations and exit' },
  {
    name: 'doctor',
    synopsis: '[--timeout SECONDS]',
    summary:
      'Check the configuration against the world it names (database, migrations, MASTER_KEY,\n' +
      'networks, gas wallet, SMTP, Redis, public URL), one line each; exits 1 when a check fails.\n' +
      'Each outside call waits at most --timeout seconds (default 5). Reads only; with embedded\n' +
      'PGlite run it while the server is stopped.',
  },
  {
    name: 'spaces create',
    synopsis: '--name NAME --owner-email EMAIL [--currency USD] [--plan free|starter|pro|scale|enterprise]',
    summary: 'Create a space (and its owner, if the email is new: a password is printed)',
  },
  {
    name: 'keys issue',
    synopsis:
      '--space ID --owner-email EMAIL --name NAME --scopes a,b [--webhook-url URL]\n' +
      '[--push-source NAME] [--lifetime-days 30|90|180|365]',
    summary: 'Issue an integration key as that owner or admin; prints key and secret once',
  },
  {
    name: 'keys revoke',
    synopsis: '--space ID --key KEY_ID --owner-email EMAIL',
    summary: 'Revoke a key; every server refuses it from its next call',
  },
  {
    name: 'ledger check',
    synopsis: '[--space ID]',
    summary:
      'Verify every entry balances and every cached balance equals its postings; exits 1 when\n' +
      'anything is off',
  },
  {
    name: 'screening load',
    synopsis: 'URL|FILE',
    summary:
      "Load OFAC's SDN.XML from a URL or a file as the sanctions list payments are screened against\n" +
      '(replaces the current list unless it holds fewer than half its entries; see README\n' +
      '"Sanctions screening")',
  },
  {
    name: 'mcp',
    synopsis: '',
    summary:
      'Serve the agent API as MCP tools over stdio, as the agent whose oat_ token is\n' +
      'TOLLBOOK_AGENT_TOKEN, calling the server at TOLLBOOK_URL (default PUBLIC_URL, else\n' +
      'http://127.0.0.1:8080)',
  },
  {
    name: 'webhooks tail',
    synopsis: '--space ID',
    summary: "Print the space's webhook deliveries as they happen (Ctrl-C stops)",
  },
  {
    name: 'webhooks replay',
    synopsis: '--space ID (--event-id ID | --since TIME)',
    summary:
      'Send again, now, the deliveries of one event or of every event since TIME (ISO 8601), on\n' +
      'both channels, with their original event ids',
  },
  {
    name: 'webhooks verify',
    synopsis:
      '--secret S[,S2] --signature sha256=HEX < body\n' +
      "--secret S[,S2] --signature 'v1,B64 ...' --webhook-id ID --timestamp T < body",
    summary:
      "Check a webhook signature (the spec's or Standard Webhooks') against the raw body on\n" +
      'standard input, under any of the secrets',
  },
  { name: 'help', synopsis: '[COMMAND]', summary: "Show this usage, or one command's" },
];

const indent = (text: string, spaces: number) => text.replaceAll('\n', `\n${' '.repeat(spaces)}`);

const USAGE = `Usage: tollbook <command> [options]
       tollbook <command> --help | tollbook --version

${COMMAND_HELP.map(
  (command) =>
    `  ${`${command.name} ${indent(command.synopsis, command.name.length + 3)}`.trimEnd()}\n      ${indent(command.summary, 6)}`,
).join('\n')}

Configuration comes from the environment; see README.md and docs/deploy.md.`;

function commandUsage(name: string): string {
  const command = defined(
    COMMAND_HELP.find((candidate) => candidate.name === name),
    `the help of ${name}`,
  );
  const synopsis = indent(command.synopsis, `Usage: tollbook ${name} `.length);
  return `Usage: tollbook ${`${name} ${synopsis}`.trimEnd()}\n\n${command.summary}\n\nConfiguration comes from the environment; see README.md and docs/deploy.md.`;
}

/** The command named by the leading positionals (one or two words), if it is one. */
function commandNamed(positionals: string[]): string | undefined {
  const two = positionals.slice(0, 2).join(' ');
  if (COMMAND_HELP.some((command) => command.name === two)) return two;
  const one = positionals[0];
  return COMMAND_HELP.some((command) => command.name === one) ? one : undefined;
}

function version(): string {
  const path = new URL('../package.json', import.meta.url);
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}

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
    webhookAllowList: runtime.config.webhookAllowList,
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
    const { createUser } = await import('./features/users/index.ts');
    ownerId = (
      await createUser({ db, clock: runtime.clock }, { email, password, name: email.split('@')[0] ?? email })
    ).id;
    process.stdout.write(`Created user ${email} with password ${password}\n`);
  }
  const plan = options.plan as 'free' | 'starter' | 'pro' | 'scale' | 'enterprise' | undefined;
  const { createSpace } = await import('./features/spaces/index.ts');
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
  const { issueKey } = await import('./features/keys/index.ts');
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
  const { revokeKey } = await import('./features/keys/index.ts');
  const revoked = await revokeKey(keysDeps(runtime), actor, need(options, 'space'), need(options, 'key'));
  process.stdout.write(`${JSON.stringify(revoked, null, 2)}\n`);
}

async function webhooksTail(runtime: Runtime, options: Options) {
  let stop = false;
  process.once('SIGINT', () => {
    stop = true;
  });
  const deps = { db: runtime.database.db, now: () => runtime.clock.now() };
  const { tailDeliveries } = await import('./features/webhooks/index.ts');
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
  if (since !== undefined && (!/^\d{4}-\d{2}-\d{2}/.test(sinceText ?? '') || Number.isNaN(since.getTime())))
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
  const { replayCommand } = await import('./features/webhooks/index.ts');
  await replayCommand(runtime, space, { eventId, since }, process.stdout);
}

/**
 * `tollbook ledger check`: the check runs in a worker thread of bounded memory, which opens the
 * database itself (ledger/check-thread.ts), so this thread loads the configuration and never
 * opens the database. Answers 1 when the ledger is unsound or the check did not finish.
 */
async function ledgerCheck(options: Options): Promise<number> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    exitOnConfigError(error);
  }
  const { CheckStopped, checkLedgerInThread } = await import('./features/ledger/index.ts');
  let report: LedgerReport;
  try {
    report = await checkLedgerInThread({
      database: databaseOf(config),
      spaceId: options.space,
    });
  } catch (error) {
    if (!(error instanceof CheckStopped)) throw error;
    process.stderr.write(`tollbook: ${error.message}\n`);
    return 1;
  }
  const lines = [
    `entries that do not balance: ${report.unbalanced.length}`,
    `entries with fewer than two postings: ${report.empty.length}`,
    `cached balances that differ from their postings: ${report.drifted.length}`,
    `prepaid balances below zero: ${report.overdrawn.length}`,
    `income days that differ from their postings: ${report.incomeDays.length}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (!report.sound) {
    process.stdout.write(
      `${JSON.stringify({ unbalanced: report.unbalanced, empty: report.empty, drifted: report.drifted, overdrawn: report.overdrawn, incomeDays: report.incomeDays }, null, 2)}\n`,
    );
    return 1;
  }
  process.stdout.write('The ledger is sound.\n');
  return 0;
}

async function screeningLoad(runtime: Runtime, options: Options) {
  const source = need(options, 'file');
  const { loadFromSource } = await import('./features/screening/index.ts');
  const outcome = await loadFromSource(
    {
      db: runtime.database.db,
      clock: runtime.clock,
      resolver: runtime.resolver,
      allowPrivate: runtime.config.webhookAllowPrivate,
    },
    source,
  );
  if (outcome.kind === 'not_modified') {
    process.stdout.write('The list has not changed since it was loaded from this URL.\n');
    return;
  }
  if (outcome.kind === 'unknown') throw new UsageError(`Nothing changed: ${outcome.problem}.`);
  if (outcome.kind === 'refused') throw new UsageError(outcome.problem);
  process.stdout.write(
    `Loaded the list published ${outcome.publishedOn || '(no date)'}: ${outcome.sdnEntries} SDN entries, ` +
      `${outcome.entries} names and addresses to screen against.\n`,
  );
}

const COMMANDS: Record<string, (runtime: Runtime, options: Options) => Promise<void>> = {
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
  'timeout',
];

/** The words after a command's name that it takes as arguments (only `screening load URL|FILE`). */
const ARGUMENT_COUNT: Record<string, number> = { 'screening load': 1 };

type Parsed = { positionals: string[]; help: boolean; version: boolean; values: Options };

function parse(argv: string[]): Parsed {
  const options: Record<string, { type: 'string' } | { type: 'boolean'; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean' },
  };
  for (const name of OPTION_NAMES) options[name] = { type: 'string' };
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options });
  const { help, version, ...texts } = values;
  return { positionals, help: help === true, version: version === true, values: texts as Options };
}

function refuse(problem: string): number {
  process.stderr.write(`tollbook: ${problem}\n\n${USAGE}\n`);
  return 2;
}

/** Help, version and unknown input: answers an exit code, or undefined when a command should run. */
function answerWithoutRunning({ positionals, help, version: asksVersion }: Parsed): number | undefined {
  if (asksVersion) {
    process.stdout.write(`tollbook ${version()}\n`);
    return 0;
  }
  const asksHelp = positionals[0] === 'help' || help;
  const words = positionals[0] === 'help' ? positionals.slice(1) : positionals;
  if (words.length === 0) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const named = commandNamed(words);
  if (named === undefined) return refuse(`unknown command "${words.join(' ')}".`);
  const extra = words.length - named.split(' ').length;
  if (asksHelp) {
    if (extra > 0 && positionals[0] === 'help') return refuse(`unknown command "${words.join(' ')}".`);
    process.stdout.write(`${commandUsage(named)}\n`);
    return 0;
  }
  if (extra > (ARGUMENT_COUNT[named] ?? 0))
    return refuse(`unexpected argument "${words.slice(named.split(' ').length).join(' ')}" after ${named}.`);
  return undefined;
}

export async function main(argv: string[]): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parse(argv);
  } catch (error) {
    return refuse((error as Error).message);
  }
  const answered = answerWithoutRunning(parsed);
  if (answered !== undefined) return answered;
  const { positionals, values } = parsed;
  const command = defined(commandNamed(positionals), 'the command, checked by answerWithoutRunning');
  if (command === 'serve') {
    const { runServer } = await import('./main.ts');
    await runServer();
    return -1;
  }
  if (command === 'mcp') return runAgentMcp();
  if (command === 'doctor') return doctorCommand(values);
  if (command === 'worker') {
    const [{ runWorkerCommand }, { createRuntime }] = await Promise.all([
      import('./features/webhooks/index.ts'),
      import('./runtime.ts'),
    ]);
    await runWorkerCommand(async () => createRuntime(loadConfig()).catch(exitOnConfigError));
    return -1;
  }
  if (command === 'webhooks verify') {
    const { secret, signature, 'webhook-id': id, timestamp } = values;
    if (!secret || !signature) {
      process.stderr.write('tollbook: --secret and --signature are required.\n');
      return 2;
    }
    const { readStandardInput, verifyCommand } = await import('./features/webhooks/index.ts');
    const body = await readStandardInput();
    return verifyCommand(secret, signature, body, process.stdout, { id, timestamp });
  }
  const early = usageProblem(command, values);
  if (early) {
    process.stderr.write(`tollbook: ${early}\n`);
    return 2;
  }
  if (command === 'ledger check') return ledgerCheck(values);
  return runWithRuntime(command, { ...values, file: positionals[2] });
}

/** migrate and the COMMANDS: each opens the database (migrating it), runs, and closes it. */
async function runWithRuntime(command: string, options: Options): Promise<number> {
  const run = command === 'migrate' ? undefined : COMMANDS[command];
  const { createRuntime } = await import('./runtime.ts');
  let runtime: Runtime;
  try {
    runtime = await createRuntime(loadConfig(), { logger: false });
  } catch (error) {
    if (error instanceof ConfigError) exitOnConfigError(error);
    throw error;
  }
  try {
    if (run === undefined) {
      const { migrate } = await import('./platform/db/migrate.ts');
      const applied = await migrate(runtime.database);
      process.stdout.write(
        applied.length > 0 ? `Applied: ${applied.join(', ')}\n` : 'The database is up to date.\n',
      );
    } else {
      await run(runtime, options);
    }
    return 0;
  } catch (error) {
    if (error instanceof UsageError || error instanceof AppError) {
      process.stderr.write(`tollbook: ${error.message}\n`);
      return 2;
    }
    throw error;
  } finally {
    await runtime.close();
  }
}

const DOCTOR_TIMEOUT_SECONDS = 5;

/** `tollbook doctor`: a configuration that does not load is its first failing check. */
async function doctorCommand(options: Options): Promise<number> {
  const raw = options.timeout ?? String(DOCTOR_TIMEOUT_SECONDS);
  if (!/^\d{1,3}(\.\d+)?$/.test(raw) || Number(raw) <= 0 || Number(raw) > 300)
    return refuse('--timeout must be a number of seconds from 0 to 300.');
  const { formatReport, runDoctor } = await import('./doctor.ts');
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const failed = {
      check: 'configuration',
      status: 'fail' as const,
      detail: error.message,
      fix: 'correct that variable',
    };
    process.stdout.write(formatReport([failed]));
    return 1;
  }
  const results = await runDoctor(config, { timeoutMs: Math.round(Number(raw) * 1000) });
  process.stdout.write(formatReport(results));
  return results.some((result) => result.status === 'fail') ? 1 : 0;
}

/** `tollbook mcp`: runs until stdin closes; answers -1 so main does not exit under it. */
async function runAgentMcp(): Promise<number> {
  const token = process.env.TOLLBOOK_AGENT_TOKEN;
  if (!token) {
    process.stderr.write('tollbook: set TOLLBOOK_AGENT_TOKEN to the agent’s oat_ token.\n');
    return 2;
  }
  const url = process.env.TOLLBOOK_URL ?? process.env.PUBLIC_URL ?? 'http://127.0.0.1:8080';
  const { runAgentMcpStdio } = await import('./features/agents/index.ts');
  await runAgentMcpStdio(url, token);
  return -1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const code = await main(process.argv.slice(2));
  if (code >= 0) process.exit(code);
}
