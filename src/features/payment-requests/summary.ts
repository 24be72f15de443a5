import type { Queryable } from '../../platform/db/database.ts';

// Whether the book has made any payment request yet, for Home's first steps (its open requests
// are summed in open-sums.ts).

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
