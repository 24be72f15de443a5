import { sql } from 'kysely';
import type { Queryable } from '../../platform/db/database.ts';
import { readAmount } from '../ledger/index.ts';

// Payment requests on the Home screen: the open ones, counted and summed per currency (what is
// still to be received), and whether the book has made any yet. Both read the book's range of
// payment_requests_space_status_recent_idx.

export type OpenTotal = { currency: string; count: number; open: bigint };

/** Active requests not yet lapsed: how many, and what they still wait for, per currency. */
export async function openRequestTotals(db: Queryable, spaceId: string, now: Date): Promise<OpenTotal[]> {
  const result = await sql<{ currency: string; count: string; open: string }>`
    SELECT currency, COUNT(*)::text AS count,
      COALESCE(SUM(GREATEST(amount_due - amount_received, 0)), 0)::text AS open
    FROM payment_requests
    WHERE space_id = ${spaceId} AND status = 'active' AND expires_at > ${now}
    GROUP BY currency
    ORDER BY currency`.execute(db);
  return result.rows.map((row) => ({
    currency: row.currency,
    count: Number(row.count),
    open: readAmount(row.open),
  }));
}

/**
 * True once the book has made any payment request: its newest, read by the book's index (a bare
 * LIMIT 1 lets the planner walk the table past other books' rows).
 */
export async function hasAnyRequest(db: Queryable, spaceId: string): Promise<boolean> {
  const found = await db
    .selectFrom('payment_requests')
    .select('id')
    .where('space_id', '=', spaceId)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return found !== undefined;
}
