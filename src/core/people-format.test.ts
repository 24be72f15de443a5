import { describe, expect, it } from 'vitest';
import { formatMoneyTextForPeople } from './money.ts';
import {
  checkLocale,
  checkTimeZone,
  formatCalendarDateForPeople,
  formatMomentDayForPeople,
  formatMomentForPeople,
  localeFromAcceptLanguage,
} from './people-format.ts';

describe('book time zone and locale', () => {
  it('takes IANA zone names in their canonical spelling and refuses others', () => {
    expect(checkTimeZone('Asia/Tokyo')).toEqual({ ok: true, value: 'Asia/Tokyo' });
    expect(checkTimeZone('europe/berlin')).toEqual({ ok: true, value: 'Europe/Berlin' });
    expect(checkTimeZone('Mars/Olympus_Mons').ok).toBe(false);
    expect(checkTimeZone('').ok).toBe(false);
  });

  it('takes BCP 47 tags in their canonical spelling and refuses malformed ones', () => {
    expect(checkLocale('ja-jp')).toEqual({ ok: true, value: 'ja-JP' });
    expect(checkLocale('en-GB')).toEqual({ ok: true, value: 'en-GB' });
    expect(checkLocale('not a locale').ok).toBe(false);
    expect(checkLocale('x').ok).toBe(false);
  });

  it('starts a new book in the most preferred language of Accept-Language, English without one', () => {
    expect(localeFromAcceptLanguage('de-DE,de;q=0.9,en;q=0.8')).toBe('de-DE');
    expect(localeFromAcceptLanguage('en;q=0.5, ja-JP;q=0.9')).toBe('ja-JP');
    expect(localeFromAcceptLanguage('*')).toBe('en');
    expect(localeFromAcceptLanguage(undefined)).toBe('en');
  });
});

describe('moments and dates for people', () => {
  const noonUtc = new Date('2026-03-01T12:00:00.000Z');

  it('writes a moment in the book zone and locale', () => {
    expect(formatMomentForPeople(noonUtc, { timeZone: 'Asia/Tokyo', locale: 'ja-JP' })).toBe(
      '2026/03/01 21:00',
    );
    expect(formatMomentForPeople(noonUtc, { timeZone: 'UTC', locale: 'en-GB' })).toBe('1 Mar 2026, 12:00');
  });

  it('writes the day a moment falls on in the book zone', () => {
    const lateUtc = new Date('2026-03-01T20:00:00.000Z');
    expect(formatMomentDayForPeople(lateUtc, { timeZone: 'Asia/Tokyo', locale: 'en-GB' })).toBe('2 Mar 2026');
  });

  it('writes a date alone as its calendar day, whatever the zone', () => {
    expect(formatCalendarDateForPeople('2026-03-01', 'en-US')).toBe('Mar 1, 2026');
    expect(formatCalendarDateForPeople('2026-03-01', 'ja-JP')).toBe('2026/03/01');
  });
});

describe('amounts for people', () => {
  it('writes fiat with its minor digits: EUR 2, JPY 0, BHD 3', () => {
    expect(formatMoneyTextForPeople('1234.50000000', 'EUR')).toBe('1,234.50 EUR');
    expect(formatMoneyTextForPeople('1235.00000000', 'JPY', 'ja-JP')).toBe('1,235 JPY');
    expect(formatMoneyTextForPeople('1234.5', 'BHD', 'de-DE')).toBe('1.234,500 BHD');
    expect(formatMoneyTextForPeople('0.00000000', 'USD')).toBe('0.00 USD');
  });

  it('never rounds: an amount finer than the minor unit keeps its digits', () => {
    expect(formatMoneyTextForPeople('0.00500000', 'USD')).toBe('0.005 USD');
    expect(formatMoneyTextForPeople('10.50000000', 'JPY')).toBe('10.5 JPY');
  });

  it('trims tokens to what matters, two places at least', () => {
    expect(formatMoneyTextForPeople('0.00012500', 'USDC')).toBe('0.000125 USDC');
    expect(formatMoneyTextForPeople('2.50000000', 'ETH')).toBe('2.50 ETH');
    expect(formatMoneyTextForPeople('12345678901234567890.12345678', 'USDC')).toBe(
      '12,345,678,901,234,567,890.12345678 USDC',
    );
  });

  it('answers null for text that is not a decimal', () => {
    expect(formatMoneyTextForPeople('ten', 'USD')).toBeNull();
  });
});
