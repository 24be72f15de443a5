// How a book writes moments and dates for people: in its own IANA time zone and BCP 47 locale.
// Pages, mail and documents format every moment through the functions here (numbers go through
// core/money.ts), so one book reads one way everywhere.

/** A book's time zone and locale, as its pages write moments and numbers. */
export type PeopleFormat = { timeZone: string; locale: string };

/** What a book without its own settings reads in (and the books made before they existed). */
export const UTC_ENGLISH: PeopleFormat = { timeZone: 'UTC', locale: 'en' };

/**
 * A book's format from its two settings (the `spaces` row's `time_zone` and `locale`); a setting
 * not there (a row not read) reads as UTC and English. Every page, mail and document of a book
 * takes its format from here.
 */
export function bookPeopleFormat(book: { time_zone: string | null; locale: string | null }): PeopleFormat {
  return { timeZone: book.time_zone ?? UTC_ENGLISH.timeZone, locale: book.locale ?? UTC_ENGLISH.locale };
}

/** An expected outcome of a check: the canonical value, or why it was refused. */
export type CheckedSetting = { ok: true; value: string } | { ok: false; problem: string };

/**
 * An IANA time zone name as Intl knows it ("Asia/Tokyo", "UTC"), in its canonical spelling;
 * a name Intl does not know is refused.
 */
export function checkTimeZone(raw: string): CheckedSetting {
  const name = raw.trim();
  if (name === '' || name.length > 64)
    return { ok: false, problem: 'The time zone must be a name such as Europe/Berlin or UTC.' };
  try {
    const resolved = new Intl.DateTimeFormat('en', { timeZone: name }).resolvedOptions().timeZone;
    return { ok: true, value: resolved };
  } catch {
    // Intl throws a RangeError for a zone it does not know: that is the answer, not a failure.
    return { ok: false, problem: `${name} is not a time zone name; write one such as Europe/Berlin or UTC.` };
  }
}

/**
 * A BCP 47 language tag ("en-GB", "ja-JP") in its canonical spelling, refused when it is not
 * well formed or when this server has no data to write dates in it.
 */
export function checkLocale(raw: string): CheckedSetting {
  const tag = raw.trim();
  let canonical: string | undefined;
  try {
    canonical = tag === '' || tag.length > 35 ? undefined : Intl.getCanonicalLocales(tag)[0];
  } catch {
    canonical = undefined;
  }
  if (canonical === undefined)
    return { ok: false, problem: 'The locale must be a language tag such as en-GB, de-DE or ja-JP.' };
  if (Intl.DateTimeFormat.supportedLocalesOf([canonical]).length === 0)
    return { ok: false, problem: `${canonical} is a language this server cannot write dates in.` };
  return { ok: true, value: canonical };
}

const LANGUAGE_RANGE = /^\s*([A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)\s*(?:;\s*q\s*=\s*([0-9.]+)\s*)?$/;

/**
 * The locale a new book starts with, from the creating browser's Accept-Language: the most
 * preferred language this server can write dates in; English when none is (or no header).
 */
export function localeFromAcceptLanguage(header: string | undefined): string {
  const ranges: { tag: string; weight: number; order: number }[] = [];
  for (const [order, part] of (header ?? '').slice(0, 1000).split(',').entries()) {
    const match = LANGUAGE_RANGE.exec(part);
    if (!match?.[1]) continue;
    const weight = match[2] === undefined ? 1 : Number(match[2]);
    if (Number.isFinite(weight) && weight > 0) ranges.push({ tag: match[1], weight, order });
  }
  ranges.sort((a, b) => b.weight - a.weight || a.order - b.order);
  for (const range of ranges) {
    const checked = checkLocale(range.tag);
    if (checked.ok) return checked.value;
  }
  return UTC_ENGLISH.locale;
}

const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a date alone ("2026-03-01", a due date), which names a day in no time zone. */
export function isCalendarDate(text: string): boolean {
  return CALENDAR_DATE.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`));
}

// Making an Intl formatter costs about 150 µs, using one a few: a list page writes dozens of
// moments. A formatter is a fixed function of its locale and options, so one is made per
// (locale, zone, style) and kept; there are as many as the books' settings in use.
const dateFormatters = new Map<string, Intl.DateTimeFormat>();

function dateFormatter(locale: string, timeZone: string, withTime: boolean): Intl.DateTimeFormat {
  const key = `${locale}|${timeZone}|${withTime}`;
  let formatter = dateFormatters.get(key);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat(locale, {
      dateStyle: 'medium',
      ...(withTime ? { timeStyle: 'short' as const } : {}),
      timeZone,
    });
    dateFormatters.set(key, formatter);
  }
  return formatter;
}

/** A moment with its date and time, in the book's zone and locale: "1 Mar 2026, 21:00". */
export function formatMomentForPeople(at: Date, format: PeopleFormat): string {
  return dateFormatter(format.locale, format.timeZone, true).format(at);
}

/** The day a moment falls on in the book's zone, without the time. */
export function formatMomentDayForPeople(at: Date, format: PeopleFormat): string {
  return dateFormatter(format.locale, format.timeZone, false).format(at);
}

/**
 * A date alone (due and issue dates) in the book's locale. It names a calendar day, not a
 * moment, so no time zone moves it: 2026-03-01 is 1 March everywhere.
 */
export function formatCalendarDateForPeople(date: string, locale: string): string {
  return dateFormatter(locale, 'UTC', false).format(new Date(`${date}T00:00:00Z`));
}
