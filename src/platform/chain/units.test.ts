import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asAmount, parseDecimalText } from '../../core/money.ts';
import { fromBaseUnits, toBaseUnits, toBaseUnitsExact } from './units.ts';

const amount = (text: string) => {
  const parsed = parseDecimalText(text);
  if (!parsed.ok) throw new Error(`bad test amount ${text}`);
  return parsed.value;
};

describe('token base units', () => {
  it('converts exactly at six decimals (USDC) and back', () => {
    expect(toBaseUnits(amount('100.5'), 6)).toEqual({ ok: true, value: 100_500_000n });
    expect(toBaseUnits(amount('0.000001'), 6)).toEqual({ ok: true, value: 1n });
    expect(toBaseUnits(amount('1000000'), 6)).toEqual({ ok: true, value: 1_000_000_000_000n });
    expect(fromBaseUnits(100_500_000n, 6)).toEqual({ ok: true, value: amount('100.5') });
  });

  it('refuses 0.0000001 USDC (and any amount finer than the token) instead of rounding', () => {
    expect(toBaseUnits(amount('0.0000001'), 6)).toEqual({ ok: false, problem: 'inexact' });
    expect(toBaseUnits(amount('1.00000001'), 6)).toEqual({ ok: false, problem: 'inexact' });
    expect(() => toBaseUnitsExact(amount('0.0000001'), 6)).toThrow(RangeError);
    expect(toBaseUnits(amount('1.5'), 0)).toEqual({ ok: false, problem: 'inexact' });
  });

  it('scales up for tokens with more than eight decimals, and refuses base units it cannot book', () => {
    expect(toBaseUnits(amount('1.5'), 18)).toEqual({ ok: true, value: 1_500_000_000_000_000_000n });
    expect(fromBaseUnits(1n, 18)).toEqual({ ok: false, problem: 'inexact' });
    expect(fromBaseUnits(10n ** 10n, 18)).toEqual({ ok: true, value: asAmount(1n) });
  });

  it('refuses negative amounts and impossible decimals', () => {
    expect(toBaseUnits(amount('-1'), 6)).toEqual({ ok: false, problem: 'negative' });
    expect(fromBaseUnits(-1n, 6)).toEqual({ ok: false, problem: 'negative' });
    expect(() => toBaseUnits(amount('1'), -1)).toThrow(RangeError);
    expect(() => toBaseUnits(amount('1'), 1.5)).toThrow(RangeError);
  });

  it('round-trips every amount the token can carry, at every decimals from 0 to 30', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 24n }),
        fc.integer({ min: 0, max: 30 }),
        (units, decimals) => {
          const back = fromBaseUnits(units, decimals);
          if (!back.ok) return decimals > 8;
          const again = toBaseUnits(back.value, decimals);
          return again.ok && again.value === units;
        },
      ),
    );
  });
});
