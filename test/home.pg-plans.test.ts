import type { KyselyPlugin, PluginTransformQueryArgs, RootOperationNode } from 'kysely';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_SIZE } from '../src/core/cursor.ts';
import { readHome } from '../src/features/home/index.ts';
import { incomeRows } from '../src/features/ledger/index.ts';
import { requireMember } from '../src/features/spaces/index.ts';
import { createHarness, type Harness } from './harness.ts';

// Home's reads on PostgreSQL, against a book with many postings (two years of them) and many
// payment requests: each statement Home runs is EXPLAINed, and none scans a whole big table.
// PostgreSQL only: PGlite plans the same SQL, but this is about the server the bench runs.

const onPostgres = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== '';
const BIG_TABLES = ['ledger_postings', 'ledger_entries', 'payment_requests', 'invoices', 'payouts'];

let h: Harness;
beforeAll(async () => {
  if (onPostgres) h = await createHarness();
});
afterAll(() => h?.close());

/** Keeps each statement Home runs, compiled, with its parameters. */
function recorder(into: { sql: string; parameters: readonly unknown[] }[]): KyselyPlugin {
  return {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      const compiled = h.db.getExecutor().compileQuery(args.node, args.queryId);
      into.push({ sql: compiled.sql, parameters: compiled.parameters });
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
}

describe.runIf(onPostgres)('Home on a big book (PostgreSQL plans)', () => {
  it('reads every figure of Home and each Income page by an index, never by scanning a big table', async () => {
    const world = await h.world();
    const { spaceId } = world;
    const bank = await h.makeAccount(spaceId, { name: 'Operating', currency: 'USD' });
    const mint = await h.inject({
      method: 'POST',
      url: '/integration/payment-requests',
      key: world.key.key,
      payload: { account_id: bank.id, amount: '5' },
    });
    const paid = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/payment-requests/${mint.json().token}/mark-paid`,
      session: world.owner.token,
      payload: { amount: '5', reference: 'ref' },
    });
    expect(paid.statusCode, paid.body).toBe(200);
    const accounts = await h.db
      .selectFrom('ledger_accounts')
      .select(['id', 'kind'])
      .where('space_id', '=', spaceId)
      .where('kind', 'in', ['income', 'asset'])
      .execute();
    const income = accounts.find((row) => row.kind === 'income')!.id;
    const asset = accounts.find((row) => row.kind === 'asset')!.id;
    // 40,000 payments over two years, two postings each; 20,000 paid requests.
    await sql`
      INSERT INTO ledger_entries (id, space_id, origin, kind, occurred_on, cause_type, created_at)
      SELECT gen_random_uuid(), ${spaceId}, 'manual', 'income', CURRENT_DATE - (n % 730), 'seed', now()
      FROM generate_series(1, 40000) AS n`.execute(h.db);
    await sql`
      INSERT INTO ledger_postings (id, space_id, entry_id, ledger_account_id, currency, amount, occurred_on)
      SELECT gen_random_uuid(), e.space_id, e.id, side.account, 'USD', side.amount, e.occurred_on
      FROM ledger_entries e
      CROSS JOIN (VALUES (${asset}::uuid, 1::numeric), (${income}::uuid, -1::numeric)) AS side(account, amount)
      WHERE e.space_id = ${spaceId} AND e.cause_type = 'seed'`.execute(h.db);
    await sql`
      INSERT INTO payment_requests (id, space_id, token, account_id, purpose, amount, currency, amount_received,
        status, expires_at, created_at, paid_at, amount_due)
      SELECT gen_random_uuid(), ${spaceId}, 'pr_seed_' || n || '_' || ${spaceId}, ${bank.id}, 'sale', 1, 'USD', 1,
        'paid', now() + interval '1 day', now() - (n || ' minutes')::interval, now(), 1
      FROM generate_series(1, 20000) AS n`.execute(h.db);
    // The seeded postings' days, pre-summed as the posting statements and the settling task would
    // have (the real payment above left an arrival, which another file's settling may move).
    await sql`
      INSERT INTO ledger_income_days (space_id, day, ledger_account_id, currency, amount, entries)
      SELECT p.space_id, p.occurred_on, p.ledger_account_id, p.currency, SUM(p.amount), COUNT(*)
      FROM ledger_postings p JOIN ledger_entries e ON e.id = p.entry_id
      WHERE p.space_id = ${spaceId} AND p.ledger_account_id = ${income} AND e.cause_type = 'seed'
      GROUP BY p.space_id, p.occurred_on, p.ledger_account_id, p.currency
      ON CONFLICT (space_id, day, ledger_account_id, currency) DO UPDATE
        SET amount = ledger_income_days.amount + excluded.amount,
          entries = ledger_income_days.entries + excluded.entries`.execute(h.db);
    for (const table of BIG_TABLES) await sql`ANALYZE ${sql.table(table)}`.execute(h.db);

    const statements: { sql: string; parameters: readonly unknown[] }[] = [];
    const db = h.db.withPlugin(recorder(statements));
    const member = await requireMember(h.db, spaceId, world.owner.id);
    const home = await readHome({ db, clock: h.clock }, member);
    expect(home.moneyIn[0]?.totals[30]).toBeGreaterThan(0n);
    expect(statements.length).toBeGreaterThan(8);
    // The Income screen's first page and a page deep in the past (by its cursor), read the same way.
    const first = await incomeRows(db, spaceId, {});
    expect(first.items.length).toBe(PAGE_SIZE);
    let cursor = first.next_cursor ?? undefined;
    for (let page = 0; page < 10 && cursor !== undefined; page++)
      cursor = (await incomeRows(h.db, spaceId, { cursor })).next_cursor ?? undefined;
    expect(cursor).toBeDefined();
    const deep = await incomeRows(db, spaceId, { cursor });
    expect(deep.items.length).toBe(PAGE_SIZE);

    // Each statement run with EXPLAIN ANALYZE: no sequential scan reads more than a handful of rows
    // of a big table (a LIMIT 1 that stops at the first row is fine; reading the table is not).
    // Nor does any statement read more than a handful of postings by any path: money in comes
    // from the days, a few rows each, and an Income page reads its own days only.
    const scans: string[] = [];
    const reads: string[] = [];
    for (const statement of statements) {
      if (!/^\s*(select|with)\b/i.test(statement.sql) || /\b(insert|update|delete)\b/i.test(statement.sql))
        continue;
      const plan = await sql<{
        'QUERY PLAN': PlanNode[];
      }>`EXPLAIN (ANALYZE, FORMAT JSON) ${sql.raw(inline(statement))}`.execute(h.db);
      for (const node of nodesOf(plan.rows[0]!['QUERY PLAN'][0]!.Plan)) {
        const read = (node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0);
        if (
          node['Node Type'] === 'Seq Scan' &&
          BIG_TABLES.includes(node['Relation Name'] ?? '') &&
          read > SCAN_LIMIT
        )
          scans.push(`${node['Relation Name']} (${read} rows): ${statement.sql}`);
        const limit = READ_LIMITS[node['Relation Name'] ?? ''];
        const all = read * (node['Actual Loops'] ?? 1);
        if (limit !== undefined && all > limit)
          reads.push(`${node['Relation Name']} (${all} rows): ${statement.sql}`);
      }
    }
    expect(scans).toEqual([]);
    expect(reads).toEqual([]);
  }, 300_000);
});

/** How many rows a sequential scan of a big table may read before it counts as reading the table. */
const SCAN_LIMIT = 100;

/**
 * How many rows one statement may read of a table by any path: no postings beyond a handful.
 * (The income days are a few rows a day per book: PostgreSQL may well scan the whole table while
 * it is this small, and switches to its index as books fill it.)
 */
const READ_LIMITS: Record<string, number> = { ledger_postings: SCAN_LIMIT };

type PlanNode = {
  Plan: PlanNode;
  'Node Type'?: string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Rows Removed by Filter'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
};

function* nodesOf(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodesOf(child);
}

/** The statement with its parameters written in as literals, for EXPLAIN. */
function inline(statement: { sql: string; parameters: readonly unknown[] }): string {
  return statement.sql.replace(/\$(\d+)/g, (_match, index: string) => {
    const value = statement.parameters[Number(index) - 1];
    if (value === null || value === undefined) return 'NULL';
    if (value instanceof Date) return `'${value.toISOString()}'::timestamptz`;
    if (typeof value === 'number' || typeof value === 'bigint') return String(value);
    return `'${String(value).replaceAll("'", "''")}'`;
  });
}
