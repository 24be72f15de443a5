import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { DatabaseHandle } from './database.ts';

export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../../migrations');

// Any fixed number works; it only has to be the same in every process.
const MIGRATION_LOCK = 7_302_114;

/** The migration files in the order they apply. */
export function migrationFiles(directory = MIGRATIONS_DIR): string[] {
  return readdirSync(directory)
    .filter((name) => /^\d{4}_[a-z0-9_]+\.sql$/.test(name))
    .sort();
}

/**
 * Applies the plain SQL files in name order, each in its own transaction together with the row
 * that records it. A transaction-level advisory lock taken inside each script's transaction makes
 * concurrent starts on one PostgreSQL apply every file exactly once.
 */
export async function migrate(handle: DatabaseHandle, directory = MIGRATIONS_DIR): Promise<string[]> {
  const files = migrationFiles(directory);
  await handle.runScript(
    `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK});
     CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());`,
  );
  if (directory === MIGRATIONS_DIR) await refuseReplacedChain(handle);
  const ran: string[] = [];
  for (const name of files) {
    const done = await sql<{ name: string }>`SELECT name FROM schema_migrations WHERE name = ${name}`.execute(
      handle.db,
    );
    if (done.rows.length > 0) continue;
    const text = readFileSync(join(directory, name), 'utf8');
    const quoted = name.replace(/'/g, "''");
    // The lock and the re-check run inside the script's transaction: a process that waited for
    // the lock finds the row and inserts nothing (ON CONFLICT), and its DDL is skipped by the guard.
    await handle
      .runScript(
        `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK});
       DO $guard$ BEGIN
         IF EXISTS (SELECT 1 FROM schema_migrations WHERE name = '${quoted}') THEN
           RAISE EXCEPTION 'tollbook-migration-already-applied';
         END IF;
       END $guard$;
       ${text}
       ;INSERT INTO schema_migrations (name) VALUES ('${quoted}');`,
      )
      .then(
        () => ran.push(name),
        (error: unknown) => {
          if (String((error as Error).message).includes('tollbook-migration-already-applied')) return;
          throw error;
        },
      );
  }
  return ran;
}

/**
 * 0001_baseline.sql replaced the chain 0001_init.sql … 0019_balance_in_one_pass.sql before any
 * release. A database made by that chain has the old tables, so the baseline cannot apply to it;
 * say so plainly instead of failing on the first CREATE TABLE.
 */
async function refuseReplacedChain(handle: DatabaseHandle): Promise<void> {
  const rows = await sql<{ name: string }>`
    SELECT name FROM schema_migrations WHERE name IN ('0001_init.sql', '0001_baseline.sql')`.execute(
    handle.db,
  );
  const names = rows.rows.map((row) => row.name);
  if (names.includes('0001_init.sql') && !names.includes('0001_baseline.sql')) {
    throw new Error(
      'This database was made by the migrations 0001_init.sql … 0019 that 0001_baseline.sql replaced ' +
        'before the first release; it cannot be upgraded in place. Start from an empty database.',
    );
  }
}
