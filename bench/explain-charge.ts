// What one charge makes PostgreSQL do, in figures that do not depend on how busy the machine is.
// A client is funded through the real flow and `CHARGE_EXPLAIN_WARM` charges fill the tables a
// little; then (1) the charge's one statement runs as EXPLAIN (ANALYZE, BUFFERS, WAL) (which makes
// the charge; the triggers' and foreign keys' times are printed with the plan), (2) the WAL that
// `CHARGE_WAL_CHARGES` charges write is read back with pg_walinspect and printed per charge, by
// record type and relation (index entries, row locks taken by foreign-key checks, commits), and
// (3) the indexes of the charge's tables with how often each was scanned. Needs PostgreSQL 15+:
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test_x npx tsx bench/explain-charge.ts

import { randomUUID } from 'node:crypto';
import { type CompiledQuery, sql } from 'kysely';
import { asAmount } from '../src/core/money.ts';
import { charge } from '../src/features/charges/service.ts';
import { chargeWorld } from './charge-world.ts';

const WARM = Number(process.env.CHARGE_EXPLAIN_WARM ?? 2_000);

const { h, deps, caller, bank, topUp } = await chargeWorld();
const ref = `explain-${randomUUID().slice(0, 8)}`;
const input = { client_ref: ref, account_id: bank.id, amount: '0.0001' };
await topUp(ref, asAmount(10n ** 14n));
for (let index = 0; index < WARM; index++)
  await charge(h.db, deps, caller, input, { price: asAmount(10_000n), topUp: null });

// The next charges' statement runs as EXPLAIN ANALYZE instead (which executes it, so the charge
// is made); the charge is answered a balance so it completes. The last of `REPEAT` is printed.
const REPEAT = Number(process.env.CHARGE_EXPLAIN_REPEAT ?? 20);
let plan = '';
const explaining = h.db.withPlugin({
  transformQuery: (args) => args.node,
  transformResult: async (args) => args.result,
});
const executor = explaining.getExecutor();
const original = executor.executeQuery.bind(executor);
(executor as { executeQuery: typeof executor.executeQuery }).executeQuery = async (query, queryId) => {
  if (!query.sql.includes('INSERT INTO charges')) return original(query, queryId);
  const explained = await original(
    { ...query, sql: `EXPLAIN (ANALYZE, BUFFERS, WAL) ${query.sql}` } as CompiledQuery,
    queryId,
  );
  plan = (explained.rows as { 'QUERY PLAN': string }[]).map((row) => row['QUERY PLAN']).join('\n');
  return { rows: [{ balance: '0' }] } as never;
};
for (let index = 0; index < REPEAT; index++)
  await charge(explaining, deps, caller, input, { price: asAmount(10_000n), topUp: null });
process.stdout.write(`${plan}\n`);

// WAL written per charge, by record type and relation (pg_walinspect, PostgreSQL 15+): what the
// database writes for each charge does not depend on how busy the machine is. Records that name
// no block of this database (commits, multixacts) may include other databases' on a shared server.
const WAL_CHARGES = Number(process.env.CHARGE_WAL_CHARGES ?? 2_000);
const WAL_WORKERS = Number(process.env.CHARGE_WAL_WORKERS ?? 20);
await sql`CREATE EXTENSION IF NOT EXISTS pg_walinspect`.execute(h.db);
const start = await sql<{ lsn: string }>`SELECT pg_current_wal_lsn()::text AS lsn`.execute(h.db);
let next = 0;
await Promise.all(
  Array.from({ length: WAL_WORKERS }, async () => {
    while (next++ < WAL_CHARGES)
      await charge(h.db, deps, caller, input, { price: asAmount(10_000n), topUp: null });
  }),
);
const wal = await sql<{ kind: string; relation: string; records: string; bytes: string; fpi: string }>`
  WITH records AS (
    SELECT resource_manager || ' ' || record_type AS kind, record_length, fpi_length,
      substring(block_ref from 'rel [0-9]+/([0-9]+)/') AS db, substring(block_ref from 'rel [0-9]+/[0-9]+/([0-9]+)') AS node
    FROM pg_get_wal_records_info(${start.rows[0]!.lsn}::pg_lsn, pg_current_wal_lsn())
  )
  SELECT kind, COALESCE(c.relname, CASE WHEN r.node IS NULL THEN '(no block)' ELSE 'other' END) AS relation,
    count(*)::text AS records, sum(record_length)::text AS bytes, sum(fpi_length)::text AS fpi
  FROM records r LEFT JOIN pg_class c ON c.relfilenode = r.node::oid
  WHERE r.db IS NULL OR r.db::oid = (SELECT oid FROM pg_database WHERE datname = current_database())
  GROUP BY 1, 2 ORDER BY count(*) DESC`.execute(h.db);
let records = 0;
let bytes = 0;
for (const row of wal.rows) {
  records += Number(row.records);
  bytes += Number(row.bytes);
  process.stdout.write(
    `  ${(Number(row.records) / WAL_CHARGES).toFixed(2).padStart(6)} records ${(Number(row.bytes) / WAL_CHARGES).toFixed(0).padStart(5)} B ` +
      `(fpi ${(Number(row.fpi) / WAL_CHARGES).toFixed(0)} B)  ${row.kind}  ${row.relation}\n`,
  );
}
process.stdout.write(
  `WAL per charge (${WAL_CHARGES} charges, ${WAL_WORKERS} in flight): ${(records / WAL_CHARGES).toFixed(2)} records, ${(bytes / WAL_CHARGES).toFixed(0)} bytes\n`,
);

const indexes = await sql<{ relname: string; indexrelname: string; idx_scan: string; size: string }>`
  SELECT relname, indexrelname, idx_scan::text, pg_size_pretty(pg_relation_size(indexrelid)) AS size
  FROM pg_stat_user_indexes
  WHERE relname IN ('ledger_entries', 'ledger_postings', 'charges', 'ledger_accounts')
  ORDER BY relname, indexrelname`.execute(h.db);
for (const row of indexes.rows)
  process.stdout.write(`${row.relname}.${row.indexrelname}: scans ${row.idx_scan}, ${row.size}\n`);
await h.close();
