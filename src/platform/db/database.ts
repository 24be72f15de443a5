import { createHash } from 'node:crypto';
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
  /** Bounds connecting and each query on PostgreSQL (`tollbook doctor`); unset: no bound. */
  timeoutMs?: number;
};

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.timeoutMs,
      query_timeout: options.timeoutMs,
    });
    pool.on('connect', (client) => prepareStatements(client));
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

// Every statement the app sends with parameters is a fixed text (Kysely's builders and the sql
// tag put values in parameters, and bulk writes pass whole documents as one parameter), so each
// is prepared once per connection under a name derived from its text: later calls skip parsing
// and planning. Texts are bounded in length and in number per process, so a statement built
// with a varying shape can never fill the server's memory; past the bound, statements run
// unnamed as before.
const PREPARED_TEXT_CHARS_MAX = 16_000;
const PREPARED_NAMES_MAX = 2_000;
const preparedNames = new Map<string, string>();

function statementName(text: string): string | undefined {
  const known = preparedNames.get(text);
  if (known !== undefined) return known;
  if (text.length > PREPARED_TEXT_CHARS_MAX || preparedNames.size >= PREPARED_NAMES_MAX) return undefined;
  const name = `tb_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`;
  preparedNames.set(text, name);
  return name;
}

type QueryFn = (...args: unknown[]) => unknown;

function prepareStatements(client: pg.PoolClient): void {
  const plain = client.query.bind(client) as QueryFn;
  const prepared: QueryFn = (text, values, ...rest) => {
    if (typeof text === 'string' && Array.isArray(values) && rest.length === 0) {
      const name = statementName(text);
      if (name !== undefined) return plain({ name, text, values });
    }
    return plain(text, values, ...rest);
  };
  (client as unknown as { query: QueryFn }).query = prepared;
}
