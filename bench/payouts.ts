// Issue 18's benchmark: payments out on PostgreSQL.
//
// 1. 1,000 `book` payments created and approved over HTTP (the app API, 50 at a time): each is
//    POST …/payments (it meets a one-approval rule) then POST …/payments/{id}/approve by a second
//    admin, which executes it (ledger entry, money.out, payout.executed). Reported: payments/s
//    and the p99 of one payment's two calls.
// 2. The same two transactions driven directly in SQL over a pg pool from this process (no HTTP,
//    no Fastify, no Kysely), 50 at a time. Target: HTTP >= 50% of direct.
// 3. Screening one destination against a list of 20,000 entries (loaded through the real
//    loader): p99 of one screen() under 1 ms.
// After each run the database is checked: one executed payout, one entry, two events per payment.

import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { systemClock } from '../src/core/clock.ts';
import { loadScreeningList, screen } from '../src/features/screening/index.ts';
import { openDatabase } from '../src/platform/db/database.ts';
import {
  type BenchContext,
  type BenchReport,
  dropDatabase,
  emptyReport,
  errorText,
  fmt,
  freshDatabase,
  percentile,
  type ServerHandle,
  startServer,
} from './lib.ts';

const BENCH = 'payouts';
const DATABASE = 'tollbook_bench_payouts';
const PAYMENTS = 1000;
const CONCURRENCY = 50;
const TARGET_RATIO = 0.5;
const SCREEN_ENTRIES = 20_000;
const SCREENS = 5_000;
const SCREEN_TARGET_MS = 1;

type Json = Record<string, unknown>;

async function call(
  server: ServerHandle,
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
) {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json: Json = {};
  try {
    json = JSON.parse(text) as Json;
  } catch {}
  return { status: response.status, json, text };
}

async function expectOk(
  what: string,
  answer: Promise<{ status: number; json: Json; text: string }>,
  status = 200,
) {
  const got = await answer;
  if (got.status !== status) throw new Error(`${what} answered ${got.status}: ${got.text.slice(0, 300)}`);
  return got.json;
}

type Setup = {
  spaceId: string;
  maker: string;
  approver: string;
  accountId: string;
  makerId: string;
  approverId: string;
};

async function prepare(server: ServerHandle): Promise<Setup> {
  const signup = async (name: string) =>
    expectOk(
      `signup ${name}`,
      call(server, 'POST', '/app/api/signup', null, {
        email: `${name}-${randomUUID()}@example.com`,
        password: `pw-${randomUUID()}`,
        name,
      }),
      201,
    );
  const maker = await signup('maker');
  const approver = await signup('approver');
  const makerToken = String(maker.session_token);
  const space = await expectOk(
    'space',
    call(server, 'POST', '/app/api/spaces', makerToken, { name: 'Bench', base_currency: 'USD', plan: 'pro' }),
    201,
  );
  const spaceId = String(space.id);
  const approverUser = approver.user as Json;
  await expectOk(
    'member',
    call(server, 'POST', `/app/api/spaces/${spaceId}/members`, makerToken, {
      email: approverUser.email,
      role: 'admin',
    }),
    201,
  );
  const key = await expectOk(
    'key',
    call(server, 'POST', `/app/api/spaces/${spaceId}/keys`, makerToken, { name: 'b', scopes: ['accounts'] }),
    201,
  );
  const account = await expectOk(
    'account',
    call(server, 'POST', '/integration/accounts', String(key.key), {
      kind: 'bank',
      name: 'Operating',
      currency: 'USD',
      opening_balance: '100000000',
    }),
    201,
  );
  await expectOk(
    'rule',
    call(server, 'POST', `/app/api/spaces/${spaceId}/approval-rules`, makerToken, {
      min_amount: '0.01',
      currency: 'USD',
      required_approvals: 1,
    }),
    201,
  );
  return {
    spaceId,
    maker: makerToken,
    approver: String(approver.session_token),
    accountId: String(account.id),
    makerId: String((maker.user as Json).id),
    approverId: String(approverUser.id),
  };
}

async function runPool(count: number, work: (index: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < count) {
      const index = next++;
      const t0 = performance.now();
      await work(index);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { perSecond: count / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

function viaHttp(server: ServerHandle, setup: Setup) {
  return runPool(PAYMENTS, async () => {
    const made = await expectOk(
      'create',
      call(server, 'POST', `/app/api/spaces/${setup.spaceId}/payments`, setup.maker, {
        account_id: setup.accountId,
        amount: '1.25',
        rail: 'book',
        payee: 'Bench supplier',
      }),
      201,
    );
    if (made.status !== 'awaiting_approval') throw new Error(`a payment is ${String(made.status)}`);
    const done = await expectOk(
      'approve',
      call(
        server,
        'POST',
        `/app/api/spaces/${setup.spaceId}/payments/${String(made.id)}/approve`,
        setup.approver,
      ),
    );
    if (done.status !== 'executed') throw new Error(`an approved payment is ${String(done.status)}`);
  });
}

type Ids = { asset: string; expense: string };

async function ledgerIds(db: pg.Pool, setup: Setup): Promise<Ids> {
  const rows = await db.query<{ kind: string; id: string }>(
    `SELECT kind, id FROM ledger_accounts WHERE space_id = $1 AND currency = 'USD' AND (
       (kind = 'asset' AND ref = $2) OR (kind = 'expense' AND ref = 'payouts'))`,
    [setup.spaceId, setup.accountId],
  );
  const asset = rows.rows.find((row) => row.kind === 'asset')?.id;
  const expense = rows.rows.find((row) => row.kind === 'expense')?.id;
  if (!asset || !expense) throw new Error('the ledger accounts of the HTTP run are missing');
  return { asset, expense };
}

async function inTransaction(db: pg.Pool, work: (client: pg.PoolClient) => Promise<void>) {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    await work(client);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** The statements the create route runs: role, account, balance, checks, the row and its event. */
async function directCreate(client: pg.PoolClient, setup: Setup, ids: Ids, id: string) {
  const now = new Date();
  await client.query('SELECT role FROM members WHERE space_id = $1 AND user_id = $2', [
    setup.spaceId,
    setup.makerId,
  ]);
  await client.query('SELECT * FROM accounts WHERE space_id = $1 AND id = $2', [
    setup.spaceId,
    setup.accountId,
  ]);
  await client.query('SELECT balance::text FROM ledger_accounts WHERE id = $1', [ids.asset]);
  await client.query('SELECT closed_through FROM spaces WHERE id = $1', [setup.spaceId]);
  // Screening reads the process's in-memory index of the list: no statement.
  await client.query('SELECT * FROM policy_rules WHERE space_id = $1 AND removed_at IS NULL', [
    setup.spaceId,
  ]);
  const rule = await client.query<{ id: string }>(
    'SELECT id FROM approval_rules WHERE space_id = $1 AND removed_at IS NULL',
    [setup.spaceId],
  );
  await client.query(
    `INSERT INTO payouts (id, space_id, account_id, maker_id, amount, currency, rail, payee, occurred_on, status,
       approval_rule_id, required_approvals, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 1.25, 'USD', 'book', 'Bench supplier', $5, 'awaiting_approval', $6, 1, $7, $7)`,
    [
      id,
      setup.spaceId,
      setup.accountId,
      setup.makerId,
      now.toISOString().slice(0, 10),
      rule.rows[0]!.id,
      now,
    ],
  );
  await client.query(
    `INSERT INTO outbox_events (id, space_id, channel, event, payload, occurred_at, created_at)
     VALUES ($1, $2, 'book', 'payment.awaiting_approval', $3, $4, $4)`,
    [
      randomUUID(),
      setup.spaceId,
      JSON.stringify({ payment_id: id, amount: '1.25000000', currency: 'USD', required_approvals: 1 }),
      now,
    ],
  );
}

/** The statements the approve route runs: lock, approval, policy, the guarded entry, events. */
async function directApprove(client: pg.PoolClient, setup: Setup, ids: Ids, id: string) {
  const now = new Date();
  await client.query('SELECT role FROM members WHERE space_id = $1 AND user_id = $2', [
    setup.spaceId,
    setup.approverId,
  ]);
  await client.query('SELECT * FROM payouts WHERE space_id = $1 AND id = $2 FOR UPDATE', [setup.spaceId, id]);
  await client.query('SELECT * FROM accounts WHERE space_id = $1 AND id = $2', [
    setup.spaceId,
    setup.accountId,
  ]);
  await client.query(
    'INSERT INTO payout_approvals (space_id, payout_id, user_id, created_at) VALUES ($1, $2, $3, $4)',
    [setup.spaceId, id, setup.approverId, now],
  );
  await client.query('SELECT user_id FROM payout_approvals WHERE space_id = $1 AND payout_id = $2', [
    setup.spaceId,
    id,
  ]);
  await client.query(
    `SELECT id FROM policy_rules WHERE space_id = $1 AND kind = 'max_per_day' AND removed_at IS NULL ORDER BY id FOR UPDATE`,
    [setup.spaceId],
  );
  await client.query('SELECT * FROM policy_rules WHERE space_id = $1 AND removed_at IS NULL', [
    setup.spaceId,
  ]);
  await client.query(
    `UPDATE payouts SET status = 'approved', approved_at = $2, updated_at = $2 WHERE id = $1`,
    [id, now],
  );
  const guarded = await client.query(
    'UPDATE ledger_accounts SET balance = balance - 1.25 WHERE id = $1 AND balance - 1.25 >= 0 RETURNING balance::text',
    [ids.asset],
  );
  if (guarded.rowCount !== 1) throw new Error('the direct run overdrew the account');
  const entryId = randomUUID();
  await client.query(
    `INSERT INTO ledger_entries (id, space_id, origin, kind, occurred_on, cause_type, cause_id, counterparty, created_at)
     VALUES ($1, $2, 'manual', 'expense', $3, 'payout', $4, 'Bench supplier', $5)`,
    [entryId, setup.spaceId, now.toISOString().slice(0, 10), id, now],
  );
  await client.query(
    `INSERT INTO ledger_postings (id, space_id, entry_id, ledger_account_id, currency, amount, occurred_on)
     VALUES ($1, $2, $3, $4, 'USD', -1.25, $6), ($5, $2, $3, $7, 'USD', 1.25, $6)`,
    [
      randomUUID(),
      setup.spaceId,
      entryId,
      ids.asset,
      randomUUID(),
      now.toISOString().slice(0, 10),
      ids.expense,
    ],
  );
  await client.query(
    `UPDATE payouts SET status = 'executed', transaction_id = $2, executed_at = $3, updated_at = $3 WHERE id = $1`,
    [id, entryId, now],
  );
  const events = [
    ['money.out', { transaction_id: entryId, amount: '1.25000000' }],
    ['payout.executed', { payment_id: id, transaction_id: entryId }],
  ] as const;
  for (const [event, payload] of events) {
    await client.query(
      `INSERT INTO outbox_events (id, space_id, channel, event, payload, occurred_at, created_at)
       VALUES ($1, $2, 'book', $3, $4, $5, $5)`,
      [randomUUID(), setup.spaceId, event, JSON.stringify(payload), now],
    );
  }
  await client.query('SELECT user_id FROM payout_approvals WHERE space_id = $1 AND payout_id = $2', [
    setup.spaceId,
    id,
  ]);
}

function viaSql(db: pg.Pool, setup: Setup, ids: Ids) {
  return runPool(PAYMENTS, async () => {
    const id = randomUUID();
    await inTransaction(db, (client) => directCreate(client, setup, ids, id));
    await inTransaction(db, (client) => directApprove(client, setup, ids, id));
  });
}

async function checkBooks(db: pg.Pool, setup: Setup, expected: number) {
  const counts = await db.query<{ payouts: string; entries: string; events: string }>(
    `SELECT (SELECT count(*) FROM payouts WHERE space_id = $1 AND status = 'executed') AS payouts,
            (SELECT count(*) FROM ledger_entries WHERE space_id = $1 AND cause_type = 'payout') AS entries,
            (SELECT count(*) FROM outbox_events WHERE space_id = $1 AND event = 'payout.executed') AS events`,
    [setup.spaceId],
  );
  const row = counts.rows[0]!;
  for (const [what, value] of Object.entries(row)) {
    if (Number(value) !== expected) throw new Error(`${what}: ${value}, expected ${expected}`);
  }
}

function sdnXml(entries: number): string {
  const parts = [
    '<?xml version="1.0"?><sdnList><publshInformation><Publish_Date>11/20/2026</Publish_Date></publshInformation>',
  ];
  for (let i = 0; i < entries / 2; i++) {
    const hex = i.toString(16).padStart(40, '0');
    parts.push(
      `<sdnEntry><uid>${i}</uid><firstName>Person${i}</firstName><lastName>Family${i}</lastName><idList><id><uid>${i}</uid>` +
        `<idType>Digital Currency Address - ETH</idType><idNumber>0x${hex}</idNumber></id></idList></sdnEntry>`,
    );
  }
  parts.push('</sdnList>');
  return parts.join('');
}

async function benchScreening(ctx: BenchContext, url: string, report: BenchReport) {
  const database = await openDatabase({ databaseUrl: url, dataDir: 'memory://', poolSize: 2 });
  try {
    const loaded = await loadScreeningList(
      { db: database.db, clock: systemClock },
      sdnXml(SCREEN_ENTRIES),
      'bench',
    );
    if (!loaded.ok || loaded.entries !== SCREEN_ENTRIES)
      throw new Error(`loading the list: ${JSON.stringify(loaded)}`);
    const latencies: number[] = [];
    let hits = 0;
    for (let i = 0; i < SCREENS; i++) {
      const n = (i * 7919) % (SCREEN_ENTRIES / 2);
      const address = i % 2 === 0 ? `0x${n.toString(16).padStart(40, '0')}` : `0x${'f'.repeat(40)}`;
      const t0 = performance.now();
      const hit = await screen(database.db, { address, names: [`Payee ${i}`] });
      latencies.push(performance.now() - t0);
      if (hit) hits++;
    }
    if (hits !== SCREENS / 2) throw new Error(`screening found ${hits} hits, expected ${SCREENS / 2}`);
    latencies.sort((a, b) => a - b);
    const p99 = percentile(latencies, 99);
    ctx.log(
      `  screening against ${fmt(SCREEN_ENTRIES)} entries: p50 ${fmt(percentile(latencies, 50), 3)} ms, ` +
        `p99 ${fmt(p99, 3)} ms over ${fmt(SCREENS)} screens (target p99 < ${SCREEN_TARGET_MS} ms)`,
    );
    report.targets.push({
      bench: BENCH,
      config: 'postgres',
      what: 'screening p99 ms (20,000 entries)',
      value: p99,
      target: SCREEN_TARGET_MS,
      pass: p99 < SCREEN_TARGET_MS,
      atMost: true,
      contaminated: false,
    });
  } finally {
    await database.close();
  }
}

export async function benchPayouts(ctx: BenchContext): Promise<BenchReport> {
  const report = emptyReport();
  if (!ctx.facts.pg.ok) {
    report.skipped.push(`${BENCH}: PostgreSQL is not reachable (${ctx.facts.pg.reason})`);
    return report;
  }
  const url = await freshDatabase(ctx.facts.pgAdminUrl, DATABASE);
  let server: ServerHandle | undefined;
  const db = new pg.Pool({ connectionString: url, max: CONCURRENCY });
  // Dropping the database at the end cuts idle connections; heard, that ends nothing.
  db.on('error', (error) => ctx.log(`  (bench connection closed: ${errorText(error)})`));
  try {
    server = await startServer({ databaseUrl: url });
    const setup = await prepare(server);
    const http = await viaHttp(server, setup);
    await checkBooks(db, setup, PAYMENTS);
    const ids = await ledgerIds(db, setup);
    const direct = await viaSql(db, setup, ids);
    await checkBooks(db, setup, PAYMENTS * 2);
    const ratio = http.perSecond / direct.perSecond;
    ctx.log(
      `  HTTP: ${fmt(http.perSecond, 1)} payments/s (create + approve), p50 ${fmt(http.p50, 1)} ms, p99 ${fmt(http.p99, 1)} ms`,
    );
    ctx.log(
      `  direct SQL: ${fmt(direct.perSecond, 1)} payments/s, p50 ${fmt(direct.p50, 1)} ms, p99 ${fmt(direct.p99, 1)} ms; ` +
        `HTTP/direct ${fmt(ratio * 100, 0)}% (target >= ${TARGET_RATIO * 100}%)`,
    );
    for (const [route, run] of [
      ['HTTP create+approve', http],
      ['direct SQL create+approve', direct],
    ] as const) {
      report.rows.push({
        bench: BENCH,
        config: 'postgres',
        route,
        rps: run.perSecond,
        p50: run.p50,
        p99: run.p99,
        non2xx: 0,
        errors: 0,
        serverCpu: null,
        otherCpu: null,
      });
    }
    report.targets.push({
      bench: BENCH,
      config: 'postgres',
      what: 'HTTP / direct SQL payments/s',
      value: ratio,
      target: TARGET_RATIO,
      pass: ratio >= TARGET_RATIO,
      contaminated: false,
    });
    await benchScreening(ctx, url, report);
  } catch (error) {
    report.failures.push(`${BENCH}: ${errorText(error)}`);
  } finally {
    await server?.stop();
    await db.end();
    await dropDatabase(ctx.facts.pgAdminUrl, DATABASE).catch(() => {});
  }
  return report;
}
