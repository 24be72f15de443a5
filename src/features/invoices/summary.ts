import { sql } from 'kysely';
import type { Queryable } from '../../platform/db/database.ts';
import { readAmount } from '../ledger/index.ts';

// Invoices on the Home screen: those past their due date and still owed, counted and summed
// per currency (read by invoices_owed_due_idx), and whether the book has made any document.

export type OverdueTotal = { currency: string; count: number; owed: bigint };

/** Sent or partly paid invoices whose due date is before `today` (YYYY-MM-DD): what is owed. */
export async function overdueTotals(db: Queryable, spaceId: string, today: string): Promise<OverdueTotal[]> {
  const result = await sql<{ currency: string; count: string; owed: string }>`
    SELECT currency, COUNT(*)::text AS count,
      COALESCE(SUM(GREATEST(total - paid_amount - credited_amount, 0)), 0)::text AS owed
    FROM invoices
    WHERE space_id = ${spaceId} AND kind = 'invoice' AND status IN ('sent', 'partial')
      AND due_on < ${today}::date
    GROUP BY currency
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
