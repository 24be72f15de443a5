import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS } from './clock.ts';
import { utcDateOf, utcDayOf } from './day.ts';

describe('the UTC day', () => {
  it('holds its instant in [start, end), one day long, starting at UTC midnight', () => {
    fc.assert(
      fc.property(fc.integer({ min: -8_640_000_000_000, max: 8_640_000_000_000 - DAY_MS }), (ms) => {
        const at = new Date(ms);
        const day = utcDayOf(at);
        expect(day.start.getTime()).toBeLessThanOrEqual(ms);
        expect(ms).toBeLessThan(day.end.getTime());
        expect(day.end.getTime() - day.start.getTime()).toBe(DAY_MS);
        expect(day.start.getUTCHours() + day.start.getUTCMinutes() + day.start.getUTCMilliseconds()).toBe(0);
        expect(day.date).toBe(at.toISOString().slice(0, 10));
        expect(utcDayOf(day.end).number).toBe(day.number + 1);
      }),
    );
  });

  it('turns at UTC midnight, whatever the offset a date was written with', () => {
    const before = utcDayOf(new Date('2026-03-01T23:59:59.999Z'));
    const after = utcDayOf(new Date('2026-03-02T00:00:00.000Z'));
    expect(before.date).toBe('2026-03-01');
    expect(after.date).toBe('2026-03-02');
    expect(after.number).toBe(before.number + 1);
    expect(utcDateOf(new Date('2026-03-02T01:30:00+02:00'))).toBe('2026-03-01');
    expect(utcDayOf(new Date(0))).toEqual({
      number: 0,
      start: new Date(0),
      end: new Date(DAY_MS),
      date: '1970-01-01',
    });
  });
});
