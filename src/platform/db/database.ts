import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  Kysely,
  PGliteDialect,
  type PostgresCursor,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
  Transaction,
} from 'kysely';
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

// Every statement Kysely sends is a fixed text with its values in parameters (the builders and
// the sql tag never splice values in; bulk writes pass whole documents as one parameter), so it
// is sent under a name derived from its text: pg parses it once per connection and PostgreSQL
// plans it as a prepared statement, instead of parsing and planning it on every call. The pool
// Kysely is given hands out each connection through an adapter that adds the name; the pg client
// itself is left as it is. Texts are bounded in length and in number per process, so a
// statement built with a varying shape never fills the server's memory: past the bound it is
// sent unnamed.
const NAMED_TEXT_CHARS_MAX = 16_000;
const NAMED_TEXTS_MAX = 2_000;
const namedTexts = new Set<string>();

function statementName(text: string): string | undefined {
  if (!namedTexts.has(text)) {
    if (text.length > NAMED_TEXT_CHARS_MAX || namedTexts.size >= NAMED_TEXTS_MAX) return undefined;
    namedTexts.add(text);
  }
  return `tb_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`;
}

function namedStatements(pool: pg.Pool): PostgresPool {
  // One adapter per pooled client: Kysely keeps its connection objects by the client it is given.
  const adapters = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const adapt = (client: pg.PoolClient): PostgresPoolClient => {
    const known = adapters.get(client);
    if (known) return known;
    function query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
    function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
    function query<R>(
      sql: string | PostgresCursor<R>,
      parameters: ReadonlyArray<unknown> = [],
    ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
      // Kysely streams through a cursor only when a dialect is given a cursor class; none is.
      if (typeof sql !== 'string') throw new Error('bug: a cursor reached the named-statement adapter');
      const name = statementName(sql);
      const config = { text: sql, values: [...parameters] };
      // pg types the command as any string and the rows as plain records; Kysely's result names
      // the commands it reads and the row type its query builder promised.
      return client.query(name === undefined ? config : { ...config, name }).then((result) => ({
        command: result.command as PostgresQueryResult<R>['command'],
        rowCount: result.rowCount ?? 0,
        rows: result.rows as R[],
      }));
    }
    const adapter: PostgresPoolClient = {
      // Kysely reads the backend's pid to cancel a query; pg keeps it on the client.
      get processID(): number | undefined {
        return Reflect.get(client, 'processID');
      },
      query,
      release: (destroy?: boolean) => client.release(destroy),
    };
    adapters.set(client, adapter);
    return adapter;
  };
  return { connect: async () => adapt(await pool.connect()), end: () => pool.end(), options: pool.options };
}

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
    const db = markTransactions(
      new Kysely<Database>({ dialect: new PostgresDialect({ pool: namedStatements(pool) }) }),
    );
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
  // Embedded PGlite is loaded only when it is the database: a server on PostgreSQL never holds it.
  const { PGlite } = await import('@electric-sql/pglite');
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
