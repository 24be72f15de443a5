import { sql } from 'kysely';
import type { Queryable } from '../../platform/db/database.ts';
import { readAmount } from '../ledger/index.ts';

// Invoices on the Home screen: those past their due date and still owed, counted and summed
// per currency from the owed-by-due-day sums the store keeps (invoice_owed_days: one row a
// currency and due day, however many invoices fall due that day), and whether the book has made
// any document.

export type OverdueTotal = { currency: string; count: number; owed: bigint };

/** Sent or partly paid invoices whose due date is before `today` (YYYY-MM-DD): what is owed. */
export async function overdueTotals(db: Queryable, spaceId: string, today: string): Promise<OverdueTotal[]> {
  const result = await sql<{ currency: string; count: string; owed: string }>`
    SELECT currency, SUM(invoices)::text AS count, SUM(owed)::text AS owed
    FROM invoice_owed_days
    WHERE space_id = ${spaceId} AND due_on < ${today}::date
    GROUP BY currency
    HAVING SUM(invoices) > 0
    ORDER BY currency`.execute(db);
  return result.rows.map((row) => ({
    currency: row.currency,
    count: Number(row.count),
    owed: readAmount(row.owed),
  }));
}

/** True once the book has made any invoice, quote or credit note. */
export async function hasAnyDocument(db: Queryable, spaceId: string): Promise<boolean> {
  const found = await db
    .selectFrom('invoices')
    .select('id')
    .where('space_id', '=', spaceId)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return found !== undefined;
}
