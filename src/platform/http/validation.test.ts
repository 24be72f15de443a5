import { describe, expect, it } from 'vitest';
import { isCalendarDate } from './validation.ts';

describe('isCalendarDate', () => {
  it.each(['2026-01-31', '2028-02-29', '2000-02-29', '0001-01-01', '9999-12-31'])('accepts %s', (text) => {
    expect(isCalendarDate(text)).toBe(true);
  });
  it.each([
    '0000-01-01',
    '2026-02-29',
    '1900-02-29',
    '2026-13-01',
    '2026-00-10',
    '2026-04-31',
    '2026-1-1',
    '26-01-01',
    '2026-01-01T00:00:00Z',
    '',
  ])('refuses %s', (text) => {
    expect(isCalendarDate(text)).toBe(false);
  });
});
