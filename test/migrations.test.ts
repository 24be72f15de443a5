import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../src/platform/db/database.ts';
import { migrate } from '../src/platform/db/migrate.ts';

// The baseline (migrations/0001_baseline.sql) replaced the chain 0001-0019, kept verbatim in
// test/fixtures/migrations-0019. This test applies both to empty databases and compares what
// the catalog holds. Tables, columns (type, nullability, default, collation, identity), indexes,
// CHECK, UNIQUE and PRIMARY KEY constraints must be the same; the only differences allowed are
// the ones the baseline was made for, each listed below: references the old chain checked in
// PL/pgSQL are foreign keys now, references that proved nothing about the space now prove it,
// and the (space_id, id) keys those references need.

const OLD_CHAIN = join(dirname(fileURLToPath(import.meta.url)), 'fixtures/migrations-0019');
const MIGRATIONS = join(dirname(fileURLToPath(import.meta.url)), '../migrations');

/** A folder holding the baseline alone: later migrations build on it and are not compared here. */
function baselineOnly(): { directory: string; remove: () => void } {
  const directory = mkdtempSync(join(tmpdir(), 'tollbook-baseline-'));
  copyFileSync(join(MIGRATIONS, '0001_baseline.sql'), join(directory, '0001_baseline.sql'));
  return { directory, remove: () => rmSync(directory, { recursive: true, force: true }) };
}

/** Keys the composite foreign keys point at: new in the baseline. */
const ADDED_KEYS = [
  'accounts.accounts_space_id_id_key',
  'client_credits.client_credits_space_id_id_key',
  'contacts.contacts_space_id_id_key',
  'invoices.invoices_space_id_id_key',
  'ledger_accounts.ledger_accounts_space_id_id_currency_key',
  'ledger_entries.ledger_entries_space_id_id_key',
  'payment_requests.payment_requests_space_id_id_key',
  'push_sources.push_sources_space_id_id_key',
  'resources.resources_space_id_id_key',
];

/** References the old chain checked with statement triggers (0014-0017): foreign keys now. */
const REFERENCES_FROM_TRIGGERS = [
  'ledger_entries.ledger_entries_reverses_entry_id_fkey',
  'ledger_entries.ledger_entries_space_id_fkey',
  'ledger_postings.ledger_postings_entry_id_fkey',
  'ledger_postings.ledger_postings_ledger_account_id_fkey',
  'outbox_event_groups.outbox_event_groups_space_id_fkey',
  'outbox_events.outbox_events_space_id_fkey',
  'push_rows.push_rows_batch_id_fkey',
  'push_rows.push_rows_entry_id_fkey',
];

/** The PL/pgSQL those references replace, and the space/batch delete refusals FKs now give. */
const FUNCTIONS_REPLACED = [
  'ledger_entries_parents',
  'outbox_events_parents',
  'push_batches_refuse_delete',
  'push_rows_parents',
  'spaces_exist',
  'spaces_refuse_delete',
];
const TRIGGERS_REPLACED = [
  'ledger_entries.ledger_entries_parents',
  'outbox_event_groups.outbox_event_groups_parents',
  'outbox_events.outbox_events_parents',
  'push_batches.push_batches_no_delete',
  'push_rows.push_rows_parents',
  'spaces.spaces_no_delete',
];

type Constraint = { name: string; type: string; def: string; columns: string[]; target: string | null };

type Catalog = {
  tables: string[];
  columns: Map<string, string>;
  constraints: Map<string, Constraint>;
  indexes: Map<string, string>;
  triggers: Map<string, string>;
  functions: Map<string, { source: string; settings: string[] | null }>;
};

async function readCatalog(handle: DatabaseHandle): Promise<Catalog> {
  const { db } = handle;
  const tables = await sql<{ name: string }>`
    SELECT c.relname AS name FROM pg_class c
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' ORDER BY 1`.execute(db);
  const columns = await sql<{ key: string; shape: string }>`
    SELECT c.relname || '.' || a.attname AS key,
           concat_ws(' ', format_type(a.atttypid, a.atttypmod),
             CASE WHEN a.attnotnull THEN 'not null' END,
             'default ' || pg_get_expr(d.adbin, d.adrelid),
             CASE WHEN a.attidentity <> '' THEN 'identity ' || a.attidentity::text END,
             CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation
               THEN 'collate ' || (SELECT collname FROM pg_collation WHERE oid = a.attcollation) END) AS shape
    FROM pg_attribute a
    JOIN pg_class c ON c.oid = a.attrelid
    JOIN pg_type t ON t.oid = a.atttypid
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
      AND a.attnum > 0 AND NOT a.attisdropped`.execute(db);
  const constraints = await sql<{
    key: string;
    name: string;
    type: string;
    def: string;
    columns: string[];
    target: string | null;
  }>`
    SELECT c.relname || '.' || k.conname AS key, k.conname AS name, k.contype::text AS type,
           pg_get_constraintdef(k.oid) AS def,
           ARRAY(SELECT attname::text FROM pg_attribute WHERE attrelid = k.conrelid AND attnum = ANY (k.conkey)
                 ORDER BY attname) AS columns,
           (SELECT relname::text FROM pg_class WHERE oid = k.confrelid) AS target
    FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
    WHERE c.relnamespace = current_schema()::regnamespace`.execute(db);
  const indexes = await sql<{ key: string; def: string }>`
    SELECT i.tablename || '.' || i.indexname AS key, replace(i.indexdef, i.schemaname || '.', '') AS def
    FROM pg_indexes i WHERE i.schemaname = current_schema()`.execute(db);
  const triggers = await sql<{ key: string; def: string }>`
    SELECT c.relname || '.' || t.tgname AS key,
           replace(pg_get_triggerdef(t.oid), current_schema() || '.', '') AS def
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
    WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal`.execute(db);
  const functions = await sql<{ name: string; source: string; settings: string[] | null }>`
    SELECT proname AS name, prosrc AS source, proconfig AS settings FROM pg_proc
    WHERE pronamespace = current_schema()::regnamespace`.execute(db);
  return {
    tables: tables.rows.map((row) => row.name),
    columns: new Map(columns.rows.map((row) => [row.key, row.shape])),
    constraints: new Map(constraints.rows.map(({ key, ...rest }) => [key, rest])),
    indexes: new Map(indexes.rows.map((row) => [row.key, row.def])),
    triggers: new Map(triggers.rows.map((row) => [row.key, row.def])),
    functions: new Map(functions.rows.map(({ name, ...rest }) => [name, rest])),
  };
}

/** Two empty places to migrate: two schemas of DATABASE_URL, or two embedded databases. */
async function emptyDatabases(): Promise<{
  handles: [DatabaseHandle, DatabaseHandle];
  drop(): Promise<void>;
}> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    const handles = [
      await openDatabase({ dataDir: 'memory://' }),
      await openDatabase({ dataDir: 'memory://' }),
    ] as [DatabaseHandle, DatabaseHandle];
    return { handles, drop: async () => Promise.all(handles.map((handle) => handle.close())).then(() => {}) };
  }
  const suffix = randomBytes(4).toString('hex');
  const schemas = [`catalog_old_${suffix}`, `catalog_new_${suffix}`];
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  for (const schema of schemas) await admin.query(`CREATE SCHEMA ${schema}`);
  const inSchema = (schema: string) => {
    const address = new URL(url);
    address.searchParams.set('options', `-c search_path=${schema}`);
    return openDatabase({ databaseUrl: address.toString(), poolSize: 2 });
  };
  const handles = [await inSchema(schemas[0]!), await inSchema(schemas[1]!)] as [
    DatabaseHandle,
    DatabaseHandle,
  ];
  return {
    handles,
    drop: async () => {
      await Promise.all(handles.map((handle) => handle.close()));
      for (const schema of schemas) await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

const keys = <T>(map: Map<string, T>) => [...map.keys()].sort();

describe('the baseline migration', () => {
  let old: Catalog;
  let baseline: Catalog;
  /** The baseline with every later migration applied: the schema a server runs on. */
  let latest: Catalog;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const places = await emptyDatabases();
    drop = places.drop;
    const [oldHandle, newHandle] = places.handles;
    expect(await migrate(oldHandle, OLD_CHAIN)).toHaveLength(19);
    const only = baselineOnly();
    try {
      expect(await migrate(newHandle, only.directory)).toEqual(['0001_baseline.sql']);
    } finally {
      only.remove();
    }
    old = await readCatalog(oldHandle);
    baseline = await readCatalog(newHandle);
    // The migrations after the baseline apply on top of it, in order, once each.
    const later = readdirSync(MIGRATIONS).filter(
      (name) => name.endsWith('.sql') && name !== '0001_baseline.sql',
    );
    expect(await migrate(newHandle)).toEqual(later.sort());
    expect(await migrate(newHandle)).toEqual([]);
    latest = await readCatalog(newHandle);
  }, 120_000);

  afterAll(async () => {
    await drop?.();
  });

  it('holds the same tables and columns as the chain 0001-0019, type, nullability, default and collation', () => {
    expect(baseline.tables).toEqual(old.tables);
    expect(baseline.tables).toHaveLength(37);
    expect(Object.fromEntries([...baseline.columns].sort())).toEqual(
      Object.fromEntries([...old.columns].sort()),
    );
  });

  it('holds the same indexes, apart from the (space_id, id) keys composite references point at', () => {
    const added = keys(baseline.indexes).filter((key) => !old.indexes.has(key));
    expect(added).toEqual(ADDED_KEYS);
    for (const [key, def] of old.indexes) expect(baseline.indexes.get(key), key).toBe(def);
  });

  it('holds every CHECK, UNIQUE and PRIMARY KEY of the chain unchanged, and adds only the listed keys', () => {
    const of = (catalog: Catalog) =>
      new Map([...catalog.constraints].filter(([, constraint]) => constraint.type !== 'f'));
    const before = of(old);
    const after = of(baseline);
    expect(keys(after).filter((key) => !before.has(key))).toEqual(ADDED_KEYS);
    for (const [key, constraint] of before) expect(after.get(key)?.def, key).toBe(constraint.def);
  });

  it('keeps every foreign key by name, as strong or stronger, and turns the trigger-checked references into foreign keys', () => {
    const of = (catalog: Catalog) =>
      new Map([...catalog.constraints].filter(([, constraint]) => constraint.type === 'f'));
    const before = of(old);
    const after = of(baseline);
    expect(keys(after).filter((key) => !before.has(key))).toEqual(REFERENCES_FROM_TRIGGERS);
    expect(keys(before).filter((key) => !after.has(key))).toEqual([]);
    for (const [key, was] of before) {
      const now = after.get(key)!;
      // Same parent table, the same columns or more (space_id, currency): never weaker.
      expect(now.target, key).toBe(was.target);
      expect(now.columns, key).toEqual(expect.arrayContaining(was.columns));
      // A space is never deleted, so nothing cascades from one; every other action is kept.
      const action = (def: string) => /ON DELETE (CASCADE|SET NULL)/.exec(def)?.[1] ?? 'none';
      if (was.target === 'spaces') expect(action(now.def), key).toBe('none');
      else expect(action(now.def), key).toBe(action(was.def));
    }
    // Every reference into a space-owned table proves the same space.
    for (const key of REFERENCES_FROM_TRIGGERS) {
      const reference = after.get(key)!;
      if (reference.target !== 'spaces') expect(reference.columns, key).toContain('space_id');
    }
  });

  it('adds no function in any later migration: rules live in TypeScript, integrity in constraints', () => {
    expect(keys(latest.functions)).toEqual(['ledger_entries_balance', 'ledger_refuse_change']);
  });

  it('keeps one trigger function of its own (the per-currency balance, with no planner switches) beside the append-only refusal', () => {
    expect(keys(baseline.functions)).toEqual(
      keys(old.functions).filter((name) => !FUNCTIONS_REPLACED.includes(name)),
    );
    expect(keys(baseline.functions)).toEqual(['ledger_entries_balance', 'ledger_refuse_change']);
    expect(old.functions.get('ledger_entries_balance')?.settings).not.toBeNull();
    expect(baseline.functions.get('ledger_entries_balance')?.settings).toBeNull();
    expect(baseline.functions.get('ledger_entries_balance')?.source).not.toMatch(
      /ledger_entries|ledger_accounts/,
    );
    expect(keys(baseline.triggers)).toEqual(
      keys(old.triggers).filter((key) => !TRIGGERS_REPLACED.includes(key)),
    );
    for (const key of keys(baseline.triggers))
      expect(baseline.triggers.get(key), key).toBe(old.triggers.get(key));
  });
});
