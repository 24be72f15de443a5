import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, PostgresDialect, Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
/** A query runner: the database itself or a transaction on it. */
export type Queryable = Kysely<Database>;

/** Runs `work` in the caller's transaction when `db` is one, else in a new one. */
export function inTransaction<T>(db: Queryable, work: (tx: Tx) => Promise<T>): Promise<T> {
  return db instanceof Transaction ? work(db) : db.transaction().execute(work);
}

export type DatabaseHandle = {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Runs a multi-statement SQL script as one transaction (simple query protocol). */
  runScript(script: string): Promise<void>;
  close(): Promise<void>;
};

const DATE_OID = 1082;

// A calendar date stays the text PostgreSQL sent ("2026-01-31"); turning it into a JS Date
// would shift it by the machine's time zone.
pg.types.setTypeParser(DATE_OID, (value: string) => value);

export type DatabaseOptions = {
  databaseUrl?: string | undefined;
  /** Directory for embedded PGlite; `memory://` keeps it in memory (tests). */
  dataDir?: string;
  poolSize?: number;
};

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10 });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const runScript = async (script: string) => {
      const client = await pool.connect();
      try {
        await client.query(`BEGIN;\n${script}\n;COMMIT;`);
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        client.release();
      }
    };
    return { db, kind: 'postgres', runScript, close: () => db.destroy() };
  }
  const dataDir = options.dataDir ?? 'memory://';
  let location = dataDir;
  if (!dataDir.startsWith('memory://')) {
    mkdirSync(dataDir, { recursive: true });
    location = join(dataDir, 'pglite');
  }
  const pglite = await PGlite.create(location, { parsers: { [DATE_OID]: (value: string) => value } });
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
  return {
    db,
    kind: 'pglite',
    runScript: async (script: string) => {
      await pglite.transaction(async (tx) => {
        await tx.exec(script);
      });
    },
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
  };
}
