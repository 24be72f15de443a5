import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, PostgresDialect, Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';
import { markTransactions } from './transaction-guard.ts';

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
const CONNECT_TIMEOUT_MS = 5_000;

// A calendar date stays the text PostgreSQL sent ("2026-01-31"); turning it into a JS Date
// would shift it by the machine's time zone.
pg.types.setTypeParser(DATE_OID, (value: string) => value);

export type DatabaseOptions = {
  databaseUrl?: string | undefined;
  /** Directory for embedded PGlite; `memory://` keeps it in memory (tests). */
  dataDir?: string;
  poolSize?: number;
  /** Where a lost connection is reported; the pool replaces it on the next checkout. */
  onConnectionLost?: ((error: Error) => void) | undefined;
  /** Bounds connecting and each query on PostgreSQL (`tollbook doctor`); unset: no bound. */
  timeoutMs?: number;
};

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    // A server that does not answer at all (a partition, a host being replaced) fails a checkout
    // after CONNECT_TIMEOUT_MS (or the caller's bound) instead of holding the request for the
    // system's TCP timeout.
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.timeoutMs ?? CONNECT_TIMEOUT_MS,
      query_timeout: options.timeoutMs,
    });
    watchConnections(pool, options.onConnectionLost ?? (() => {}));
    const db = markTransactions(new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }));
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
  const db = markTransactions(new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) }));
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

/**
 * A connection cut by the server (a restart, a failover, `pg_terminate_backend`, a pooler's idle
 * timeout) emits `error` on its client and, when idle, on the pool; unheard, either ends the
 * process. The client's own listener hears it whether the connection is idle or checked out (a
 * request in flight gets the error from its query instead); the pool drops the broken client and
 * opens a fresh one on the next checkout. The pool's listener is only there so that its `error`
 * is heard: the client's listener has already reported the same error.
 */
function watchConnections(pool: pg.Pool, report: (error: Error) => void): void {
  pool.on('connect', (client) => {
    client.on('error', report);
  });
  pool.on('error', () => {});
}

const CONNECTION_LOST_STATES = new Set(['57P01', '57P02', '57P03', '53300']);
const CONNECTION_LOST_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTCONN']);

/**
 * The database could not be asked: the connection was cut, refused or never came (the server is
 * restarting, failing over, or out of connections). The HTTP layer answers 503 with
 * `Retry-After`. A cut before COMMIT leaves nothing written; a cut during COMMIT leaves the outcome
 * unknown to us, which is why money writes carry an Idempotency-Key: the retry replays or redoes.
 */
export function isConnectionLost(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (CONNECTION_LOST_STATES.has(code) || code.startsWith('08')) return true;
    if (CONNECTION_LOST_CODES.has(code)) return true;
  }
  if (typeof message !== 'string') return false;
  return (
    message === 'Connection terminated unexpectedly' ||
    message === 'Client has encountered a connection error and is not queryable' ||
    message.startsWith('timeout exceeded when trying to connect') ||
    message === 'Connection terminated due to connection timeout'
  );
}
