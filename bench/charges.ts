// Issues 3 and 16's benchmark: prepaid charges and payment-request minting on PostgreSQL.
//
// 1. `POST /integration/charges` through HTTP, 50 connections, spread over 1,000 pre-funded
//    client_refs and then all on one hot client_ref.
// 2. Driven directly from this process, no HTTP, for the same two cases and interleaved: the
//    charge's own transaction (the route's service function on the app's database handle, as
//    the route calls it) and a minimal prepared charge (move the guarded balance and insert the
//    entry, in one statement).
//    Targets, each printed beside its reference: own ≥ 0.4 × minimal (1,000 refs); HTTP ≥ 0.5 ×
//    own and ≥ 2,000/s (1,000 refs); HTTP on one hot ref ≥ 0.3 × minimal on that one row.
// 3. `POST /integration/payment-requests` (mint) through HTTP.
//
// Every client_ref is funded once through the real flow: a first charge answers a top-up request
// (asked for 1,000,000 USD), paid with the development card rail; the price is 0.0001 USD, so
// every measured charge is paid. After each run the database is checked: one charges row per 2xx
// (or per committed direct transaction) and no new top-up request (no charge went unpaid).

import { createHash, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import pg from 'pg';
import { systemClock } from '../src/core/clock.ts';
import { asAmount } from '../src/core/money.ts';
import { type ChargesDeps, charge } from '../src/features/charges/service.ts';
import { type DatabaseHandle, openDatabase } from '../src/platform/db/database.ts';
import type { IntegrationCaller } from '../src/platform/http/context.ts';
import {
  type BenchContext,
  type BenchReport,
  type BenchSettings,
  benchDatabaseName,
  type CpuReport,
  describeCpu,
  dropDatabase,
  emptyReport,
  errorText,
  FOREIGN_CPU_LIMIT,
  fmt,
  freshDatabase,
  logRunWarnings,
  type Measurement,
  measuredRow,
  non2xxCodes,
  percentile,
  type ServerHandle,
  startServer,
  waitForQuiet,
  watchCpu,
} from './lib.ts';

const BENCH = 'charges';
// Its own database name, so it never collides with another benchmark's.
const DATABASE = 'tollbook_bench_charges';
// One key drives every connection; the limiter is lifted to its maximum accepted value.
const RATE_LIMIT = '10000000';
const REFS = 1000;
const HOT_REF = 'bench-hot';
/** Tiny, so one top-up carries every charge of the run. */
const PRICE = '0.0001';
const PRICE_E8 = '0.00010000';
const TOP_UP = '1000000';
const FUND_CONCURRENCY = 16;
const QUIET_WAIT_MS = 5000;
const CARD = { number: '4242424242424242', exp: '12/34', cvc: '123' };
/** HTTP charges over the charge's own transaction driven directly, 1,000 client_refs. */
const TARGET_SPREAD = 0.5;
/** HTTP charges per second, 1,000 client_refs, on this machine. */
const TARGET_SPREAD_RPS = 2000;
/** The charge's own transaction over the minimal charge transaction, 1,000 client_refs. */
const TARGET_OWN_OF_MINIMAL = 0.4;
/** HTTP charges on one hot client_ref over the minimal hot-row transaction. */
const TARGET_HOT = 0.3;
const PRICE_AMOUNT = asAmount(10_000n);

type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Small HTTP helper for the setup calls.

async function call(
  server: ServerHandle,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; json: Json; text: string; headers: Headers }> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json: Json = {};
  try {
    json = JSON.parse(text) as Json;
  } catch {
    // Not JSON; callers check the status and show the text.
  }
  return { status: response.status, json, text, headers: response.headers };
}

function expectStatus(what: string, got: { status: number; text: string }, status: number): void {
  if (got.status !== status)
    throw new Error(`${what} answered ${got.status}, not ${status}: ${got.text.slice(0, 300)}`);
}

// ---------------------------------------------------------------------------------------------
// Setup: accounts, funded client credits, the ids the direct runs need.

type Setup = {
  headers: Record<string, string>;
  spaceId: string;
  keyId: string;
  bankAccountId: string;
  cryptoAccountId: string;
  refs: string[];
  /** client_ref -> its client credit and ledger account, read from the database after funding. */
  credits: Map<string, { creditId: string; ledgerAccountId: string }>;
  incomeLedgerAccountId: string;
  /** The minimal reference's own space and its guarded account per client_ref. */
  minimalSpaceId: string;
  minimalAccounts: Map<string, string>;
};

export async function fundClients(
  server: ServerHandle,
  headers: Record<string, string>,
  accountId: string,
  refs: string[],
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < refs.length) {
      const ref = refs[next++]!;
      const first = await call(server, 'POST', '/integration/charges', headers, {
        client_ref: ref,
        account_id: accountId,
        amount: PRICE,
        top_up_amount: TOP_UP,
      });
      expectStatus(`first charge for ${ref}`, first, 200);
      const topUp = first.json.top_up as Json | null;
      if (first.json.paid !== false || typeof topUp?.token !== 'string') {
        throw new Error(
          `the first charge for ${ref} did not answer a top-up request: ${first.text.slice(0, 300)}`,
        );
      }
      const paid = await call(server, 'POST', `/pay/${topUp.token}/card`, {}, CARD);
      expectStatus(`paying the top-up of ${ref} by card`, paid, 200);
      if (paid.json.status !== 'paid')
        throw new Error(`the top-up of ${ref} is ${String(paid.json.status)} after paying`);
    }
  };
  await Promise.all(Array.from({ length: FUND_CONCURRENCY }, worker));
}

async function prepare(ctx: BenchContext, server: ServerHandle, db: pg.Pool): Promise<Setup> {
  const key = server.key!;
  const headers = { authorization: `Bearer ${key}` };
  const ping = await call(server, 'GET', '/integration/ping', headers);
  expectStatus('GET /integration/ping with the demo key', ping, 200);
  const limit = ping.headers.get('ratelimit-limit');
  if (limit !== RATE_LIMIT) {
    throw new Error(
      `ratelimit-limit is ${limit}, not ${RATE_LIMIT}: the load runs would measure 429 refusals`,
    );
  }
  const spaceId = String(ping.json.space_id);

  const bank = await call(server, 'POST', '/integration/accounts', headers, {
    kind: 'bank',
    name: 'B',
    currency: 'USD',
  });
  expectStatus('creating the USD bank account', bank, 201);
  const crypto = await call(server, 'POST', '/integration/accounts', headers, {
    kind: 'crypto',
    name: 'W',
    currency: 'USDC',
    network: 'local',
    address: `0x${'1'.repeat(40)}`,
  });
  expectStatus('creating the USDC crypto account', crypto, 201);
  const bankAccountId = String(bank.json.id);

  const refs = Array.from({ length: REFS }, (_, index) => `bench-client-${String(index).padStart(4, '0')}`);
  const started = Date.now();
  await fundClients(server, headers, bankAccountId, [...refs, HOT_REF]);
  ctx.log(
    `  funded ${fmt(refs.length + 1)} client_refs (${fmt(refs.length)} + 1 hot) with ${TOP_UP} USD each in ` +
      `${fmt((Date.now() - started) / 1000, 1)} s (charge -> top-up -> card, ${FUND_CONCURRENCY} at a time)`,
  );

  // One charge now must be paid from the funded balance.
  const probe = await call(server, 'POST', '/integration/charges', headers, {
    client_ref: HOT_REF,
    account_id: bankAccountId,
    amount: PRICE,
  });
  expectStatus('a charge after funding', probe, 200);
  if (probe.json.paid !== true)
    throw new Error(`a charge after funding was not paid: ${probe.text.slice(0, 300)}`);

  const keyRow = await db.query<{ id: string }>('SELECT id FROM integration_keys WHERE key_hash = $1', [
    createHash('sha256').update(key).digest('hex'),
  ]);
  const keyId = keyRow.rows[0]?.id;
  if (!keyId) throw new Error('the demo key is not in integration_keys (by its sha256 hash)');
  const creditRows = await db.query<{ client_ref: string; id: string; ledger_account_id: string }>(
    `SELECT client_ref, id, ledger_account_id FROM client_credits WHERE space_id = $1 AND currency = 'USD'`,
    [spaceId],
  );
  const credits = new Map(
    creditRows.rows.map((row) => [
      row.client_ref,
      { creditId: row.id, ledgerAccountId: row.ledger_account_id },
    ]),
  );
  if (credits.size !== refs.length + 1)
    throw new Error(`expected ${refs.length + 1} client credits, found ${credits.size}`);
  const income = await db.query<{ id: string }>(
    `SELECT id FROM ledger_accounts WHERE space_id = $1 AND kind = 'income' AND ref = 'general' AND currency = 'USD'`,
    [spaceId],
  );
  const incomeLedgerAccountId = income.rows[0]?.id;
  if (!incomeLedgerAccountId) throw new Error('no general USD income ledger account after a paid charge');
  // The minimal reference moves balances with no postings, so it runs in a space of its own
  // (the soundness check after the runs reads the bench space only): one credit-normal, guarded
  // ledger account per client_ref, holding what a top-up would.
  const minimalSpaceId = randomUUID();
  await db.query(
    `INSERT INTO spaces (id, name, base_currency, plan, public_handle, created_at)
     VALUES ($1, 'bench minimal', 'USD', 'free', $2, now())`,
    [minimalSpaceId, `bench-minimal-${minimalSpaceId.slice(0, 8)}`],
  );
  const minimalRows = await db.query<{ ref: string; id: string }>(
    `INSERT INTO ledger_accounts (id, space_id, kind, ref, currency, normal_side, tracks_balance, no_overdraft,
       balance, created_at)
     SELECT gen_random_uuid(), $1, 'client_credit', ref, 'USD', 'credit', true, true, -$2::numeric, now()
     FROM unnest($3::text[]) AS ref
     RETURNING ref, id`,
    [minimalSpaceId, TOP_UP, [...refs, HOT_REF]],
  );
  const minimalAccounts = new Map(minimalRows.rows.map((row) => [row.ref, row.id]));
  return {
    headers,
    spaceId,
    minimalSpaceId,
    minimalAccounts,
    keyId,
    bankAccountId,
    cryptoAccountId: String(crypto.json.id),
    refs,
    credits,
    incomeLedgerAccountId,
  };
}

// ---------------------------------------------------------------------------------------------
// Measuring: the same discipline as lib.measure (quiet wait, discarded warm-up, CPU accounting,
// one repeat when other processes were busy), for any load: autocannon or direct SQL.

type RunResult = {
  rps: number;
  p50: number;
  p99: number;
  total: number;
  /** Answers that count as done: 2xx responses, committed transactions. */
  succeeded: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
};

type Load = (seconds: number) => Promise<RunResult>;

export type Measured = Measurement & {
  /** Succeeded units over the warm-up and every attempt: what the database must now hold. */
  succeededAll: number;
  /** Loads run: the warm-up and every measured attempt. */
  runs: number;
  /** Sampled wait events of the bench database's backends during the reported run. */
  waits: string;
};

export async function measureLoad(
  settings: BenchSettings,
  load: Load,
  labels: Map<number, string>,
  waitSampler: () => { stop(): Promise<string> },
): Promise<Measured> {
  const { waitedMs } = await waitForQuiet(QUIET_WAIT_MS);
  let succeededAll = 0;
  let warmupNon2xx = 0;
  let warmupErrors = 0;
  if (settings.warmupSeconds > 0) {
    const warmup = await load(settings.warmupSeconds);
    succeededAll += warmup.succeeded;
    warmupNon2xx = warmup.non2xx;
    warmupErrors = warmup.errors + warmup.timeouts;
  }
  const attempts: { result: RunResult; cpu: CpuReport; waits: string }[] = [];
  for (let attempt = 0; attempt <= 1; attempt++) {
    const sampler = waitSampler();
    const cpu = watchCpu(labels);
    const result = await load(settings.durationSeconds);
    const report = cpu.stop();
    attempts.push({ result, cpu: report, waits: await sampler.stop() });
    succeededAll += result.succeeded;
    if ((report.foreignPct ?? 0) <= FOREIGN_CPU_LIMIT) break;
  }
  const best = attempts.reduce((a, b) => ((b.cpu.foreignPct ?? 0) < (a.cpu.foreignPct ?? 0) ? b : a));
  const { result } = best;
  return {
    rps: result.rps,
    p50: result.p50,
    p99: result.p99,
    total: result.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: result.statusCodes,
    warmupNon2xx,
    warmupErrors,
    waitedForQuietMs: waitedMs,
    cpu: best.cpu,
    discarded: attempts
      .filter((attempt) => attempt !== best)
      .map((attempt) => ({
        rps: attempt.result.rps,
        foreignPct: attempt.cpu.foreignPct ?? 0,
        foreignTop: attempt.cpu.foreignTop,
      })),
    succeededAll,
    runs: attempts.length + (settings.warmupSeconds > 0 ? 1 : 0),
    waits: best.waits,
  };
}

/** Every 100 ms, what the bench database's other backends are waiting on; a summary at the end. */
export function sampleWaits(adminUrl: string, database: string): { stop(): Promise<string> } {
  const client = new pg.Client({ connectionString: adminUrl });
  client.on('error', () => {});
  const counts = new Map<string, number>();
  let samples = 0;
  let running = true;
  const loop = (async () => {
    try {
      await client.connect();
      while (running) {
        const rows = await client.query<{ wait: string; n: string }>(
          `SELECT CASE WHEN state = 'active' THEN COALESCE(wait_event_type || ':' || wait_event, 'running (CPU)')
                       WHEN state LIKE 'idle in transaction%' THEN 'idle in transaction (waits for its client)'
                       ELSE 'idle' END AS wait,
                  count(*)::text AS n
           FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'
           GROUP BY 1`,
          [database],
        );
        samples += 1;
        for (const row of rows.rows) counts.set(row.wait, (counts.get(row.wait) ?? 0) + Number(row.n));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } catch {
      // Sampling is informative only.
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await client.end().catch(() => {});
      if (samples === 0) return 'no samples';
      return [...counts]
        .filter(([wait]) => wait !== 'idle')
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([wait, count]) => `${wait} ${fmt(count / samples, 1)}`)
        .join(', ');
    },
  };
}

/** An autocannon load; `nextBody`, when given, supplies each request's body. */
export function httpLoad(
  server: ServerHandle,
  settings: BenchSettings,
  request: { path: string; headers: Record<string, string>; body?: string; nextBody?: () => string },
): Load {
  return async (seconds) => {
    const { nextBody } = request;
    const result = await autocannon({
      url: `${server.baseUrl}${request.path}`,
      method: 'POST',
      headers: { ...request.headers, 'content-type': 'application/json' },
      body: request.body,
      connections: settings.connections,
      pipelining: settings.pipelining,
      duration: seconds,
      requests: nextBody ? [{ setupRequest: (req) => ({ ...req, body: nextBody() }) }] : undefined,
    });
    return {
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      total: result.requests.total,
      succeeded: result['2xx'],
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      statusCodes: non2xxCodes(result),
    };
  };
}

// ---------------------------------------------------------------------------------------------
// Driven directly, no HTTP. Two transactions, on pools of the same size in this process:
//
// 1. The charge's own transaction: the service function the route runs (charges/service.ts
//    `charge`), on Kysely over the app's own database handle (its statements prepared as the
//    server's are), called exactly as the route calls it without an Idempotency-Key: on the
//    handle, where a paid charge is one statement (runAtomicWrite).
// 2. The minimal charge transaction, the reference (pgbench-style, prepared): move the client's
//    balance under a guard (the UPDATE takes its row lock) and insert the entry, as one statement
//    (the stricter of the two forms the issue measured: one statement ran 13,692/s, the same work
//    as BEGIN, two statements and COMMIT 8,846/s); nothing else a charge must keep (no postings,
//    no charge row, no domain rules).

const MINIMAL = {
  name: 'bench_minimal_charge',
  text:
    'WITH moved AS (UPDATE ledger_accounts SET balance = balance + $1::numeric ' +
    'WHERE id = $2 AND -(balance + $1::numeric) >= 0 RETURNING balance) ' +
    'INSERT INTO ledger_entries (id, space_id, origin, kind, occurred_on, cause_type, created_at) ' +
    "SELECT $3, $4, 'internal', 'income', $5, 'bench', $6 FROM moved RETURNING id",
};

const MINIMAL_STATEMENTS =
  'WITH moved AS (UPDATE ledger_accounts ... WHERE guard RETURNING balance) INSERT ledger_entries ... FROM moved (one prepared statement)';

/** The minimal charge; true when written, false when the guard refused it (nothing written). */
async function minimalCharge(client: pg.PoolClient, setup: Setup, ref: string): Promise<boolean> {
  const accountId = setup.minimalAccounts.get(ref)!;
  const at = new Date();
  const written = await client.query({
    ...MINIMAL,
    values: [PRICE_E8, accountId, randomUUID(), setup.minimalSpaceId, at.toISOString().slice(0, 10), at],
  });
  return written.rows.length === 1;
}

type Direct = { handle: DatabaseHandle; deps: ChargesDeps; caller: IntegrationCaller };

/** The charge's own transaction: the route's service call, made as the route makes it. */
async function ownCharge(direct: Direct, setup: Setup, ref: string): Promise<boolean> {
  const amounts = { price: PRICE_AMOUNT, topUp: null };
  const input = { client_ref: ref, account_id: setup.bankAccountId, amount: PRICE };
  const answer = await charge(direct.handle.db, direct.deps, direct.caller, input, amounts);
  return answer.paid;
}

/** `workers` async loops, each running one transaction after another until time is up. */
function transactionLoad(
  workers: number,
  nextRef: () => string,
  runOne: (ref: string) => Promise<boolean>,
): Load {
  return async (seconds) => {
    const latencies: number[] = [];
    let committed = 0;
    let refused = 0;
    let errors = 0;
    const failures = new Map<string, number>();
    const started = performance.now();
    const deadline = started + seconds * 1000;
    const worker = async () => {
      while (performance.now() < deadline) {
        const begun = performance.now();
        try {
          if (await runOne(nextRef())) committed += 1;
          else refused += 1;
          latencies.push(performance.now() - begun);
        } catch (error) {
          errors += 1;
          const text = errorText(error).slice(0, 120);
          failures.set(text, (failures.get(text) ?? 0) + 1);
        }
      }
    };
    await Promise.all(Array.from({ length: workers }, worker));
    const elapsed = (performance.now() - started) / 1000;
    const sorted = Float64Array.from(latencies).sort();
    const statusCodes: Record<string, number> = {};
    if (refused > 0) statusCodes['refused (insufficient balance)'] = refused;
    for (const [text, count] of failures) statusCodes[`error: ${text}`] = count;
    return {
      rps: committed / elapsed,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      total: committed + refused,
      succeeded: committed,
      non2xx: refused,
      errors,
      timeouts: 0,
      statusCodes,
    };
  };
}

/** A pool connection per transaction, as the server takes one. */
function minimalLoad(pool: pg.Pool, setup: Setup, workers: number, nextRef: () => string): Load {
  return transactionLoad(workers, nextRef, async (ref) => {
    const client = await pool.connect();
    let broken = false;
    try {
      return await minimalCharge(client, setup, ref);
    } catch (error) {
      broken = true;
      throw error;
    } finally {
      client.release(broken);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Reporting.

function describe(
  ctx: BenchContext,
  label: string,
  m: Measured,
  server: ServerHandle | undefined,
  unit: string,
): void {
  ctx.log(
    `    ${label.padEnd(34)} ${fmt(m.rps).padStart(6)} ${unit}   p50 ${fmt(m.p50, 1)} ms   p99 ${fmt(m.p99, 1)} ms   ` +
      `${fmt(m.total)} done`,
  );
  ctx.log(`      cpu: ${describeCpu(m.cpu)}`);
  ctx.log(`      pg backends (mean of 100 ms samples): ${m.waits || 'all idle'}`);
  logRunWarnings(ctx, m, label, unit, server);
}

function row(config: string, route: string, m: Measured, withServer: boolean) {
  return measuredRow({ bench: BENCH, config, route }, m, withServer);
}

type Counts = { charges: number; topUps: number; sales: number };

async function counts(db: pg.Pool, spaceId: string): Promise<Counts> {
  const result = await db.query<{ charges: string; top_ups: string; sales: string }>(
    `SELECT (SELECT count(*) FROM charges WHERE space_id = $1)::text AS charges,
            (SELECT count(*) FROM payment_requests WHERE space_id = $1 AND purpose = 'top_up')::text AS top_ups,
            (SELECT count(*) FROM payment_requests WHERE space_id = $1 AND purpose = 'sale')::text AS sales`,
    [spaceId],
  );
  const first = result.rows[0]!;
  return { charges: Number(first.charges), topUps: Number(first.top_ups), sales: Number(first.sales) };
}

/** Reads the counts once they stop moving: requests in flight when autocannon stopped still land. */
async function settledCounts(db: pg.Pool, spaceId: string): Promise<Counts> {
  let last = await counts(db, spaceId);
  for (let tries = 0; tries < 15; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = await counts(db, spaceId);
    if (now.charges === last.charges && now.topUps === last.topUps && now.sales === last.sales) return now;
    last = now;
  }
  return last;
}

/**
 * The database must hold what the run claims, and no charge may have gone unpaid (no new
 * top-up). `inFlight` allows for requests autocannon abandoned when a run's time was up (it
 * counts no answer for them, but the server still carries them out): at most one per connection
 * per run.
 */
function checkWrites(
  what: string,
  before: Counts,
  after: Counts,
  expected: Partial<Counts>,
  inFlight: number,
): string[] {
  const problems: string[] = [];
  for (const field of ['charges', 'topUps', 'sales'] as const) {
    const delta = after[field] - before[field];
    const want = expected[field] ?? 0;
    const slack = field in expected ? inFlight : 0;
    if (delta < want || delta > want + slack) {
      problems.push(
        `${what}: ${field} grew by ${fmt(delta)}, expected ${fmt(want)}` +
          (slack > 0 ? ` (+ at most ${fmt(slack)} abandoned in flight)` : ''),
      );
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------

async function run(ctx: BenchContext, report: BenchReport): Promise<void> {
  const { facts, settings } = ctx;
  const config = 'postgres';
  ctx.log(`  [${config}] fresh database ${benchDatabaseName(DATABASE)}, starting server...`);
  const databaseUrl = await freshDatabase(facts.pgAdminUrl, DATABASE);
  let server: ServerHandle | undefined;
  const db = new pg.Pool({ connectionString: databaseUrl, max: settings.connections });
  db.on('error', () => {});
  try {
    server = await startServer({
      databaseUrl,
      env: { RATE_LIMIT_PER_MINUTE: RATE_LIMIT },
      expectKey: true,
    });
    if (!server.key) throw new Error('no integration key was printed');
    ctx.log(`  [${config}] server pid ${server.pid} at ${server.baseUrl} (default DATABASE_POOL_SIZE, 10)`);
    const setup = await prepare(ctx, server, db);
    const sampler = () => sampleWaits(facts.pgAdminUrl, benchDatabaseName(DATABASE));
    const serverLabels = new Map([
      [server.pid, 'server'],
      [process.pid, 'bench (autocannon)'],
    ]);
    const problems: string[] = [];

    // Round-robin over the refs: with 50 connections and 1,000 refs, collisions are rare.
    const spreadBodies = setup.refs.map((ref) =>
      JSON.stringify({ client_ref: ref, account_id: setup.bankAccountId, amount: PRICE }),
    );
    let spreadNext = 0;
    const hotBody = JSON.stringify({ client_ref: HOT_REF, account_id: setup.bankAccountId, amount: PRICE });
    const cases = [
      {
        name: `${fmt(REFS)} refs`,
        body: { nextBody: () => spreadBodies[spreadNext++ % spreadBodies.length]! },
        nextRef: () => setup.refs[spreadNext++ % setup.refs.length]!,
        target: TARGET_SPREAD,
      },
      { name: '1 hot ref', body: { body: hotBody }, nextRef: () => HOT_REF, target: TARGET_HOT },
    ];

    ctx.log(`  [${config}] through HTTP: POST /integration/charges, price ${PRICE} USD`);
    const http: Measured[] = [];
    for (const testCase of cases) {
      const before = await counts(db, setup.spaceId);
      const m = await measureLoad(
        settings,
        httpLoad(server, settings, {
          path: '/integration/charges',
          headers: setup.headers,
          ...testCase.body,
        }),
        serverLabels,
        sampler,
      );
      describe(ctx, `charges, ${testCase.name}`, m, server, 'charges/s');
      const after = await settledCounts(db, setup.spaceId);
      const inFlight = m.runs * settings.connections;
      problems.push(
        ...checkWrites(`HTTP ${testCase.name}`, before, after, { charges: m.succeededAll }, inFlight),
      );
      http.push(m);
      report.rows.push(row(`postgres, ${testCase.name}`, 'POST /integration/charges', m, true));
    }

    ctx.log(`  [${config}] through HTTP: POST /integration/payment-requests (USDC account, amount 2.5 USD)`);
    {
      const before = await counts(db, setup.spaceId);
      const body = JSON.stringify({
        account_id: setup.cryptoAccountId,
        amount: '2.5',
        currency: 'USD',
        memo: 'bench',
      });
      const m = await measureLoad(
        settings,
        httpLoad(server, settings, { path: '/integration/payment-requests', headers: setup.headers, body }),
        serverLabels,
        sampler,
      );
      describe(ctx, 'payment request mint', m, server, 'req/s');
      const after = await settledCounts(db, setup.spaceId);
      const inFlight = m.runs * settings.connections;
      problems.push(...checkWrites('HTTP mint', before, after, { sales: m.succeededAll }, inFlight));
      report.rows.push(row(config, 'POST /integration/payment-requests', m, true));
    }

    // The server is done; stopping it leaves the machine to the direct runs.
    await server.stop();
    server = undefined;

    ctx.log(
      `  [${config}] direct, no HTTP: ${settings.connections} async workers in this process, one transaction ` +
        `per charge, on pools of ${settings.connections} connections; own and minimal interleaved per case:`,
    );
    ctx.log(`    own: charges/service.ts charge() as the route calls it (one prepared statement when paid)`);
    ctx.log(`    minimal: ${MINIMAL_STATEMENTS}`);
    const handle = await openDatabase({ databaseUrl, poolSize: settings.connections });
    const own: Direct = {
      handle,
      deps: { clock: systemClock, publicUrl: 'http://127.0.0.1' },
      caller: {
        keyId: setup.keyId,
        spaceId: setup.spaceId,
        issuerUserId: setup.keyId,
        scopes: ['payments'],
        pushSourceId: null,
      },
    };
    const directLabels = new Map([[process.pid, 'bench (direct SQL)']]);
    const direct: Measured[] = [];
    const minimal: Measured[] = [];
    try {
      for (const testCase of cases) {
        const before = await counts(db, setup.spaceId);
        const m = await measureLoad(
          settings,
          transactionLoad(settings.connections, testCase.nextRef, (ref) => ownCharge(own, setup, ref)),
          directLabels,
          sampler,
        );
        describe(ctx, `own transaction, ${testCase.name}`, m, undefined, 'tx/s');
        // Every worker finishes its transaction before the load returns: the count is exact.
        const after = await counts(db, setup.spaceId);
        problems.push(
          ...checkWrites(`direct ${testCase.name}`, before, after, { charges: m.succeededAll }, 0),
        );
        direct.push(m);
        report.rows.push(row(`postgres, ${testCase.name}`, 'own charge transaction (direct)', m, false));
        const reference = await measureLoad(
          settings,
          minimalLoad(db, setup, settings.connections, testCase.nextRef),
          directLabels,
          sampler,
        );
        describe(ctx, `minimal transaction, ${testCase.name}`, reference, undefined, 'tx/s');
        minimal.push(reference);
        report.rows.push(
          row(`postgres, ${testCase.name}`, 'minimal charge transaction (direct)', reference, false),
        );
      }
    } finally {
      await handle.close();
    }

    // The ledger must still be sound: every entry balances, tracked balances equal their postings.
    const ledger = await db.query<{ unbalanced: string; drifted: string }>(
      `SELECT (SELECT count(*) FROM (SELECT entry_id FROM ledger_postings WHERE space_id = $1
                 GROUP BY entry_id, currency HAVING SUM(amount) <> 0) u)::text AS unbalanced,
              (SELECT count(*) FROM (SELECT a.id FROM ledger_accounts a
                 LEFT JOIN ledger_postings p ON p.ledger_account_id = a.id
                 WHERE a.tracks_balance AND a.space_id = $1
                 GROUP BY a.id, a.balance HAVING a.balance <> COALESCE(SUM(p.amount), 0)) d)::text AS drifted`,
      [setup.spaceId],
    );
    const soundness = ledger.rows[0]!;
    if (soundness.unbalanced !== '0' || soundness.drifted !== '0') {
      problems.push(
        `ledger unsound: ${soundness.unbalanced} unbalanced entries, ${soundness.drifted} drifted balances`,
      );
    }
    const totals = await counts(db, setup.spaceId);
    ctx.log(
      `  [${config}] after the runs: ${fmt(totals.charges)} charges, ${fmt(totals.topUps)} top-ups (all from funding), ` +
        `${fmt(totals.sales)} minted requests; ledger ${problems.length === 0 ? 'sound' : 'NOT sound'}`,
    );

    // The targets, each beside its reference from this run.
    const [spreadHttp, hotHttp] = http;
    const [spreadOwn] = direct;
    const [spreadMinimal, hotMinimal] = minimal;
    const targets: {
      what: string;
      config: string;
      value: number;
      reference: string;
      target: number;
      runs: Measured[];
      atMost?: boolean;
    }[] = [
      {
        what: 'own charge tx/s ÷ minimal charge tx/s',
        config: `postgres, ${cases[0]!.name}`,
        value: spreadOwn!.rps / spreadMinimal!.rps,
        reference: `${fmt(spreadOwn!.rps)} / ${fmt(spreadMinimal!.rps)}`,
        target: TARGET_OWN_OF_MINIMAL,
        runs: [spreadOwn!, spreadMinimal!],
      },
      {
        what: 'HTTP charges/s ÷ own charge tx/s',
        config: `postgres, ${cases[0]!.name}`,
        value: spreadHttp!.rps / spreadOwn!.rps,
        reference: `${fmt(spreadHttp!.rps)} / ${fmt(spreadOwn!.rps)}`,
        target: TARGET_SPREAD,
        runs: [spreadHttp!, spreadOwn!],
      },
      {
        what: 'HTTP charges/s',
        config: `postgres, ${cases[0]!.name}`,
        value: spreadHttp!.rps,
        reference: `${fmt(spreadHttp!.rps)}`,
        target: TARGET_SPREAD_RPS,
        runs: [spreadHttp!],
      },
      {
        what: 'HTTP charges/s ÷ minimal hot-row tx/s',
        config: `postgres, ${cases[1]!.name}`,
        value: hotHttp!.rps / hotMinimal!.rps,
        reference: `${fmt(hotHttp!.rps)} / ${fmt(hotMinimal!.rps)}`,
        target: TARGET_HOT,
        runs: [hotHttp!, hotMinimal!],
      },
    ];
    for (const target of targets) {
      const pass = target.value >= target.target;
      const contaminated = target.runs.some((m) => (m.cpu.foreignPct ?? 0) > FOREIGN_CPU_LIMIT);
      const invalid = target.runs.some((m) => m.non2xx + m.errors + m.timeouts > 0);
      ctx.log(
        `    ${target.what}, ${target.config}: ${target.reference} = ${fmt(target.value, target.value < 10 ? 3 : 0)}   ` +
          `target >= ${target.target}   ${pass ? 'PASS' : 'FAIL'}` +
          (invalid ? '   (INVALID: refusals or errors were counted)' : '') +
          (contaminated ? '   (contaminated: other processes were busy, see above)' : ''),
      );
      report.targets.push({
        bench: BENCH,
        config: target.config,
        what: target.what,
        value: target.value,
        target: target.target,
        pass,
        contaminated,
      });
    }
    for (const problem of problems) {
      ctx.log(`  !!! ${problem}`);
      report.failures.push(`${BENCH} [${config}]: ${problem}`);
    }
  } finally {
    await server?.stop();
    await db.end().catch(() => {});
    await dropDatabase(facts.pgAdminUrl, DATABASE).catch((error) => {
      ctx.log(`  [${config}] could not drop ${DATABASE}: ${errorText(error)}`);
    });
  }
}

export async function benchCharges(ctx: BenchContext): Promise<BenchReport> {
  const report = emptyReport();
  if (!ctx.facts.pg.ok) {
    const why = `PostgreSQL not reachable at ${ctx.facts.pgAdminUrl} (${ctx.facts.pg.reason})`;
    report.skipped.push(`${BENCH}: ${why}`);
    ctx.log(`  skipped: ${why}`);
    return report;
  }
  try {
    await run(ctx, report);
  } catch (error) {
    const message = errorText(error);
    report.failures.push(`${BENCH} [postgres]: ${message}`);
    ctx.log(`  FAILED: ${message}`);
  }
  return report;
}
