import { DAY_MS } from './clock.ts';

// The service's day is the UTC calendar day. Every "today" (an agent's daily cap, the payouts'
// max_per_day rule, the date a row is booked on or a page calls today) is the day this file
// gives; SQL never works out a day itself, it is handed the bounds.

export type UtcDay = {
  /** Whole days since 1970-01-01: the number a running daily total is stamped with. */
  number: number;
  /** The day's first instant, UTC midnight. */
  start: Date;
  /** The next day's first instant: the day is [start, end). */
  end: Date;
  /** The day as YYYY-MM-DD. */
  date: string;
};

/** The UTC day `at` falls in. */
export function utcDayOf(at: Date): UtcDay {
  const number = Math.floor(at.getTime() / DAY_MS);
  const start = new Date(number * DAY_MS);
  return { number, start, end: new Date(start.getTime() + DAY_MS), date: start.toISOString().slice(0, 10) };
}

/** The UTC date (YYYY-MM-DD) `at` falls on. */
export function utcDateOf(at: Date): string {
  return utcDayOf(at).date;
}
