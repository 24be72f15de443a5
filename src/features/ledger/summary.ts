import type { AmountE8 } from '../../core/money.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { naturalBalance } from './domain.ts';
import { incomeTotalsFrom } from './income-days.ts';
import { readAmount } from './service.ts';

// The ledger's figures for the Home screen: money in per day, summed over the book's income
// accounts from a given day on, read from the pre-summed income days (income-days.ts): a few
// rows a day and the arrivals not yet settled, never each posting.

export type IncomeDay = { day: string; currency: string; amount: AmountE8 };

/** Income booked per day and currency on and after `fromDay` (YYYY-MM-DD), oldest day first. */
export async function incomeByDay(db: Queryable, spaceId: string, fromDay: string): Promise<IncomeDay[]> {
  const rows = await incomeTotalsFrom(db, spaceId, fromDay);
  return rows.map((row) => ({
    day: row.day,
    currency: row.currency,
    amount: naturalBalance('credit', readAmount(row.signed)),
  }));
}
