import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db, Queryable } from './database.ts';

// A lock that several processes sharing one PostgreSQL take in turn around work that is not a
// database write (a send to a chain node). It is a session-level advisory lock, taken and
// released on one connection reserved for the holder and never inside a transaction: the work
// may wait on the outside world for seconds without holding a transaction open, and a holder
// whose connection dies loses the lock with its session, so a crashed process blocks nobody.

/** The two 32-bit keys PostgreSQL's advisory locks take, drawn from a name. */
function lockKeys(name: string): [number, number] {
  const digest = createHash('sha256').update(name).digest();
  return [digest.readInt32BE(0), digest.readInt32BE(4)];
}

/**
 * Runs `work` while this process holds the session lock called `name`; waits for any other
 * holder first. The work's answer (or error) goes back once the lock is released. A failed
 * release (a cut connection, whose session end frees the lock anyway) is logged and does not
 * hide the work's answer: the work has happened.
 */
export function withSessionLock<T>(
  db: Db,
  name: string,
  work: () => Promise<T>,
  logger?: Logger | undefined,
): Promise<T> {
  return withFirstFreeLock(db, [name], () => work(), logger);
}

/**
 * Runs `work` holding the first of the session locks `names` no other session holds, tried in
 * order without waiting; when every one is held, waits for the first. `work` learns which it
 * holds (its index in `names`) and gets the session holding it, for statements of its own that
 * must not queue for another connection while the lock is held. Released as withSessionLock
 * releases.
 */
export function withFirstFreeLock<T>(
  db: Db,
  names: readonly string[],
  work: (index: number, session: Queryable) => Promise<T>,
  logger?: Logger | undefined,
): Promise<T> {
  return db.connection().execute(async (connection) => {
    let held = -1;
    for (const [index, name] of names.entries()) {
      const [high, low] = lockKeys(name);
      const tried = await sql<{
        locked: boolean;
      }>`SELECT pg_try_advisory_lock(${high}, ${low}) AS locked`.execute(connection);
      if (tried.rows[0]?.locked) {
        held = index;
        break;
      }
    }
    if (held < 0) {
      const [high, low] = lockKeys(names[0] ?? '');
      await sql`SELECT pg_advisory_lock(${high}, ${low})`.execute(connection);
      held = 0;
    }
    const [high, low] = lockKeys(names[held] ?? '');
    try {
      return await work(held, connection);
    } finally {
      try {
        await sql`SELECT pg_advisory_unlock(${high}, ${low})`.execute(connection);
      } catch (error) {
        logger?.error({ err: error, lock: names[held] }, 'releasing a session lock failed');
      }
    }
  });
}
