import { DAY_MS } from '../../core/clock.ts';
import { utcDateOf, utcDayOf } from '../../core/day.ts';

// Endpoint cards, with no I/O.

/** The card's chart covers this many UTC days, today included. */
export const CARD_DAYS = 30;

/** The first UTC midnight of the chart that ends today. */
export function chartStart(now: Date): Date {
  return new Date(utcDayOf(now).start.getTime() - (CARD_DAYS - 1) * DAY_MS);
}

/** One entry per day of the chart, oldest first, days without payers at zero. */
export function dailySeries(now: Date, counts: Map<string, number>): { date: string; payers: number }[] {
  const start = chartStart(now).getTime();
  return Array.from({ length: CARD_DAYS }, (_, index) => {
    const date = utcDateOf(new Date(start + index * DAY_MS));
    return { date, payers: counts.get(date) ?? 0 };
  });
}
