import { sql } from 'kysely';
import { type Clock, DAY_MS } from '../../core/clock.ts';
import type { Queryable } from '../db/database.ts';

// Tables that grow with traffic and whose old rows serve nobody. Each rule names the rows a
// periodic job deletes; the job deletes them a small batch per statement (a short transaction
// each, rows other processes hold are skipped), so it never holds long locks. The other tables
// that grow with traffic keep their rows for a reason written in docs/design/scale.md, or are
// pruned by the feature that owns them (the webhook journal, idempotency records, rate buckets,
// attempt throttles, chat records).

export type RetentionRule = {
  table: 'sessions' | 'password_resets' | 'notifications' | 'stripe_events' | 'x402_sign_in_nonces';
  /** The key the batch is chosen by: its columns (a book's rows are keyed with the book). */
  key: readonly ('id' | 'event_id' | 'space_id' | 'nonce')[];
  /** Rows older than this (by `age`) are deleted. */
  keepMs: number;
  /** The column that dates a row. */
  age: 'expires_at' | 'created_at' | 'received_at';
};

export const RETENTION_RULES: readonly RetentionRule[] = [
  // An expired session signs nobody in; revoked ones expire on their own date too.
  { table: 'sessions', key: ['id'], age: 'expires_at', keepMs: DAY_MS },
  // A reset link past its deadline opens nothing.
  { table: 'password_resets', key: ['id'], age: 'expires_at', keepMs: DAY_MS },
  // Notifications are news: after 90 days, read or not, they are history the books keep elsewhere.
  { table: 'notifications', key: ['id'], age: 'created_at', keepMs: 90 * DAY_MS },
  // Stripe retries an event for three days; its id is remembered for thirty to refuse replays.
  { table: 'stripe_events', key: ['event_id'], age: 'received_at', keepMs: 30 * DAY_MS },
  // A sign-in past its expiry is refused by the extension's validator whatever the table says;
  // its nonce is kept a day beyond, then it guards nothing.
  { table: 'x402_sign_in_nonces', key: ['space_id', 'nonce'], age: 'expires_at', keepMs: DAY_MS },
];

/** Deletes one batch of a rule's old rows; answers how many went. */
async function deleteBatch(db: Queryable, rule: RetentionRule, cutoff: Date, batchSize: number) {
  const table = sql.table(rule.table);
  const key = sql.join(rule.key.map((column) => sql.ref(column)));
  const age = sql.ref(rule.age);
  const result = await sql`
    DELETE FROM ${table} WHERE (${key}) IN (
      SELECT ${key} FROM ${table} WHERE ${age} < ${cutoff}
      LIMIT ${batchSize} FOR UPDATE SKIP LOCKED
    )`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/**
 * Applies one rule: batch after batch until a batch comes back short or `batchesMax` ran (the
 * next run goes on). Answers how many rows went.
 */
export async function applyRetention(
  db: Queryable,
  clock: Clock,
  rule: RetentionRule,
  limits: { batchSize: number; batchesMax: number } = { batchSize: 500, batchesMax: 20 },
): Promise<number> {
  const cutoff = new Date(clock.now().getTime() - rule.keepMs);
  let total = 0;
  for (let batch = 0; batch < limits.batchesMax; batch += 1) {
    const deleted = await deleteBatch(db, rule, cutoff, limits.batchSize);
    total += deleted;
    if (deleted < limits.batchSize) break;
  }
  return total;
}
