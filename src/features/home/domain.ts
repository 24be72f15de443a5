import { DAY_MS } from '../../core/clock.ts';
import { type AmountE8, asAmount } from '../../core/money.ts';

// Home's pure rules: the windows money in is summed over, and the per-currency series its
// chart draws, one bar per day with the days that had no income as zero.

/** The windows Home sums money in over, in days, today included. */
export const WINDOWS = [1, 7, 30] as const;
export type WindowDays = (typeof WINDOWS)[number];

/** The first day (YYYY-MM-DD) of the `days`-day window that ends on `today`. */
export function windowStart(today: string, days: number): string {
  return new Date(Date.parse(`${today}T00:00:00Z`) - (days - 1) * DAY_MS).toISOString().slice(0, 10);
}

export type DayAmount = { day: string; currency: string; amount: AmountE8 };

export type CurrencySeries = {
  currency: string;
  /** One per day of the longest window, oldest first. */
  days: { day: string; amount: AmountE8 }[];
  /** The sum over each window, keyed by its length in days. */
  totals: Record<WindowDays, AmountE8>;
};

/** Per currency (alphabetical), the daily amounts of the last 30 days and each window's total. */
export function seriesOf(rows: readonly DayAmount[], today: string): CurrencySeries[] {
  const longest = WINDOWS[WINDOWS.length - 1] as WindowDays;
  const days: string[] = [];
  for (let back = longest - 1; back >= 0; back--) days.push(windowStart(today, back + 1));
  const currencies = [...new Set(rows.map((row) => row.currency))].sort();
  return currencies.map((currency) => {
    const byDay = new Map<string, bigint>();
    for (const row of rows)
      if (row.currency === currency) byDay.set(row.day, (byDay.get(row.day) ?? 0n) + row.amount);
    const series = days.map((day) => ({ day, amount: asAmount(byDay.get(day) ?? 0n) }));
    const totals = {} as Record<WindowDays, AmountE8>;
    for (const window of WINDOWS) {
      const from = windowStart(today, window);
      totals[window] = asAmount(
        series.filter((point) => point.day >= from).reduce((sum, point) => sum + point.amount, 0n),
      );
    }
    return { currency, days: series, totals };
  });
}

/** A bar's height in whole pixels out of `height`, for an amount against the series' largest. */
export function barHeight(amount: bigint, largest: bigint, height: number): number {
  if (largest <= 0n || amount <= 0n) return 0;
  const scaled = (amount * BigInt(height)) / largest;
  return Math.max(1, Number(scaled));
}

export type ChecklistStep = { key: string; label: string; done: boolean; screen: string };

export type Checklist = { steps: ChecklistStep[]; allDone: boolean };

/** The first steps of a new book, each ticked from what the book holds. */
export function checklistOf(facts: {
  profile: boolean;
  account: boolean;
  key: boolean;
  requestOrInvoice: boolean;
  member: boolean;
}): Checklist {
  const steps: ChecklistStep[] = [
    {
      key: 'profile',
      label: 'Fill in your business profile',
      done: facts.profile,
      screen: 'settings#profile',
    },
    { key: 'account', label: 'Add your first account', done: facts.account, screen: 'accounts' },
    { key: 'key', label: 'Issue your first key', done: facts.key, screen: 'keys' },
    {
      key: 'request',
      label: 'Make your first payment request or invoice',
      done: facts.requestOrInvoice,
      screen: 'invoices/new',
    },
    { key: 'member', label: 'Invite a member', done: facts.member, screen: 'members' },
  ];
  return { steps, allDone: steps.every((step) => step.done) };
}
