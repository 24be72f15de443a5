import { describe, expect, it } from 'vitest';
import { inClosedPeriod } from './domain.ts';

describe('the closed period', () => {
  it('holds the closing date and every day before it, not the day after', () => {
    expect(inClosedPeriod('2026-03-31', '2026-03-31')).toBe(true);
    expect(inClosedPeriod('2026-03-15', '2026-03-31')).toBe(true);
    expect(inClosedPeriod('2026-04-01', '2026-03-31')).toBe(false);
  });

  it('holds no day while nothing is closed', () => {
    expect(inClosedPeriod('2020-01-01', null)).toBe(false);
  });
});
