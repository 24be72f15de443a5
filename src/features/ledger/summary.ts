import { sql } from 'kysely';
import type { AmountE8 } from '../../core/money.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { naturalBalance } from './domain.ts';
import { readAmount } from './service.ts';

// The ledger's figures for the Home screen: money in per day, summed over the book's income
// accounts from a given day on. Each income account's postings are read by the range
// (ledger_account_id, occurred_on) of ledger_postings_account_idx, never the whole table.

export type IncomeDay = { day: string; currency: string; amount: AmountE8 };

/** Income booked per day and currency on and after `fromDay` (YYYY-MM-DD), oldest day first. */
export async function incomeByDay(db: Queryable, spaceId: string, fromDay: string): Promise<IncomeDay[]> {
  const result = await sql<{ day: string; currency: string; signed: string }>`
    SELECT p.occurred_on::text AS day, p.currency, SUM(p.amount)::text AS signed
    FROM ledger_accounts a
    JOIN ledger_postings p ON p.ledger_account_id = a.id AND p.occurred_on >= ${fromDay}::date
    WHERE a.space_id = ${spaceId} AND a.kind = 'income'
    GROUP BY p.occurred_on, p.currency
    ORDER BY p.occurred_on, p.currency`.execute(db);
  return result.rows.map((row) => ({
    day: row.day,
    currency: row.currency,
    amount: naturalBalance('credit', readAmount(row.signed)),
  }));
}
