import { sql } from 'kysely';
import type { Queryable } from '../../src/platform/db/database.ts';

// Race tests hold a lock in one session and start work in others that must wait for it. Instead
// of sleeping and hoping the others got that far, a test waits for the state it means: other
// sessions blocked on a lock (pg_stat_activity.wait_event_type = 'Lock') whose blockers lead back
// to the holder's session. PostgreSQL only: embedded PGlite runs one statement at a time on its
// one connection, so nothing there can wait for a lock (those tests run on PostgreSQL only).

const POLL_EVERY_MS = 10;
const WAIT_MAX_MS = 10_000;

/** How many sessions wait for a lock that the session of `holder` holds, directly or through one another. */
async function waitersOn(holder: Queryable): Promise<number> {
  // The holder polls from inside its transaction, where PostgreSQL keeps the first reading of
  // pg_stat_activity until the transaction ends; without clearing it, a session that reached the
  // lock after the first poll would never be seen waiting.
  await sql`SELECT pg_stat_clear_snapshot()`.execute(holder);
  const result = await sql<{ waiters: number }>`
    WITH RECURSIVE blocked(pid) AS (
      SELECT pid FROM pg_stat_activity WHERE pg_backend_pid() = ANY (pg_blocking_pids(pid))
      UNION
      SELECT activity.pid
        FROM pg_stat_activity activity
        JOIN blocked ON blocked.pid = ANY (pg_blocking_pids(activity.pid))
    )
    SELECT count(*)::int AS waiters
      FROM blocked JOIN pg_stat_activity activity USING (pid)
     WHERE activity.wait_event_type = 'Lock'`.execute(holder);
  return result.rows[0]?.waiters ?? 0;
}

/**
 * Resolves once at least `count` other sessions are blocked behind the lock held by `holder`'s
 * session (pass the transaction that holds it); fails after WAIT_MAX_MS, naming how many were.
 */
export async function untilBlockedBehind(holder: Queryable, count = 1): Promise<void> {
  const deadline = Date.now() + WAIT_MAX_MS;
  for (;;) {
    const waiters = await waitersOn(holder);
    if (waiters >= count) return;
    if (Date.now() > deadline)
      throw new Error(`expected ${count} session(s) blocked behind this one, found ${waiters}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_EVERY_MS));
  }
}
