import { DAY_MS } from '../../core/clock.ts';
import { type UtcDay, utcDayOf } from '../../core/day.ts';

// Endpoint cards, with no I/O.

/** The card's chart covers this many UTC days, today included. */
export const CARD_DAYS = 30;

/** The chart's UTC days, oldest first, ending with today's. */
export function chartDays(now: Date): UtcDay[] {
  const today = utcDayOf(now).start.getTime();
  return Array.from({ length: CARD_DAYS }, (_, index) =>
    utcDayOf(new Date(today - (CARD_DAYS - 1 - index) * DAY_MS)),
  );
}

/** One entry per day of the chart, oldest first, days without payers at zero. */
export function dailySeries(
  days: readonly UtcDay[],
  counts: Map<string, number>,
): { date: string; payers: number }[] {
  return days.map((day) => ({ date: day.date, payers: counts.get(day.date) ?? 0 }));
}

/** The HTTP methods an endpoint card may name for x402 clients (the bazaar extension's). */
export const HTTP_METHODS = ['GET', 'HEAD', 'DELETE', 'POST', 'PUT', 'PATCH'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];
