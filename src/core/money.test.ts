import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AMOUNT_MAX,
  asAmount,
  expandExponent,
  formatAmount,
  formatAmountForPeople,
  formatAmountTrimmed,
  formatDecimalTextForPeople,
  formatMoneyForPeople,
  isRecordSpelling,
  parseAmountInput,
  parseDecimalText,
  parseJsonNumber,
} from './money.ts';

describe('parseDecimalText', () => {
  it.each([
    ['1', 100_000_000n],
    ['1.5', 150_000_000n],
    ['+2.25', 225_000_000n],
    ['-0.00000001', -1n],
    ['.5', 50_000_000n],
    ['5.', 500_000_000n],
    ['0001.10000000000', 110_000_000n],
    ['12345678901234567890.12345678', 1234567890123456789012345678n],
  ])('reads %s exactly', (text, units) => {
    expect(parseDecimalText(text)).toEqual({ ok: true, value: units });
  });

  it.each([
    '',
    '+',
    '-',
    '.',
    '+.',
    '-.',
    '..',
    '1.2.3',
    '1e3',
    '--1',
    '+-1',
    ' 1',
    '1 ',
    'NaN',
    'Infinity',
    '0x10',
    '1,5',
    '١',
  ])('refuses %j as not a decimal', (text) => {
    expect(parseDecimalText(text)).toEqual({ ok: false, problem: 'not_decimal' });
  });

  it('refuses a ninth fraction digit instead of rounding it away', () => {
    expect(parseDecimalText('0.123456789')).toEqual({ ok: false, problem: 'too_precise' });
    expect(parseDecimalText('0.123456780')).toEqual({ ok: true, value: 12_345_678n });
  });
});

describe('parseJsonNumber and parseAmountInput', () => {
  it('reads JSON numbers by their shortest decimal spelling', () => {
    expect(parseJsonNumber(0.1)).toEqual({ ok: true, value: 10_000_000n });
    expect(parseJsonNumber(1e16)).toEqual({ ok: true, value: AMOUNT_MAX });
    expect(parseJsonNumber(1e21)).toEqual({ ok: true, value: 10n ** 21n * 100_000_000n });
    expect(parseJsonNumber(1e-9)).toEqual({ ok: false, problem: 'too_precise' });
  });

  it('refuses non-finite numbers and non-amount values', () => {
    expect(parseJsonNumber(Number.NaN).ok).toBe(false);
    expect(parseJsonNumber(Number.POSITIVE_INFINITY).ok).toBe(false);
    for (const value of [true, false, null, undefined, {}, [], ['1']])
      expect(parseAmountInput(value).ok).toBe(false);
  });

  it('expands exponents into positional text', () => {
    expect(expandExponent('1.5e+3')).toBe('1500');
    expect(expandExponent('2e-7')).toBe('0.0000002');
    expect(expandExponent('-1.25e1')).toBe('-12.5');
    expect(expandExponent('42')).toBe('42');
  });
});

describe('formatting', () => {
  it('spells records with eight places and webhooks without trailing zeros', () => {
    expect(formatAmount(asAmount(150_000_000n))).toBe('1.50000000');
    expect(formatAmount(asAmount(-1n))).toBe('-0.00000001');
    expect(formatAmountTrimmed(asAmount(150_000_000n))).toBe('1.5');
    expect(formatAmountTrimmed(asAmount(1_000_000_000n))).toBe('10');
    expect(formatAmountTrimmed(asAmount(0n))).toBe('0');
  });

  it('format then parse is the identity for any amount', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (units) => {
        const amount = asAmount(units);
        expect(parseDecimalText(formatAmount(amount))).toEqual({ ok: true, value: amount });
        expect(parseDecimalText(formatAmountTrimmed(amount))).toEqual({ ok: true, value: amount });
      }),
    );
  });

  it('any number a float carries exactly parses to the same value as its text', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1_000_000_000, max: 1_000_000_000 }),
        fc.integer({ min: 0, max: 99_999_999 }),
        (whole, cents) => {
          const text = `${whole}.${String(cents).padStart(8, '0')}`;
          const value = Number(text);
          if (String(value) !== expandExponent(String(value))) return;
          const fromNumber = parseJsonNumber(value);
          const fromText = parseDecimalText(text);
          if (Math.abs(whole) < 10_000_000) expect(fromNumber).toEqual(fromText);
        },
      ),
    );
  });
});

describe('formatAmountForPeople and formatMoneyForPeople', () => {
  it('spells the number alone for tables, the currency added for the public pages', () => {
    expect(formatAmountForPeople(asAmount(123_450_000_000n))).toBe('1,234.50');
  });

  it('shows two decimals at least, every significant digit, grouped thousands and the currency', () => {
    expect(formatMoneyForPeople(asAmount(200_000_000n), 'USDC')).toBe('2.00 USDC');
    expect(formatMoneyForPeople(asAmount(250_000_000n), 'USD')).toBe('2.50 USD');
    expect(formatMoneyForPeople(asAmount(150_000n), 'USD')).toBe('0.0015 USD');
    expect(formatMoneyForPeople(asAmount(1n), 'USD')).toBe('0.00000001 USD');
    expect(formatMoneyForPeople(asAmount(0n), 'EUR')).toBe('0.00 EUR');
    expect(formatMoneyForPeople(asAmount(123_456_750_000_000n), 'USD')).toBe('1,234,567.50 USD');
    expect(formatMoneyForPeople(asAmount(-100_000_000_000n), 'USD')).toBe('-1,000.00 USD');
    expect(formatMoneyForPeople(asAmount(99_900_000_000n), 'USD')).toBe('999.00 USD');
  });

  it('never rounds: the shown number, ungrouped, parses back to the amount', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (units) => {
        const amount = asAmount(units);
        const [number = ''] = formatMoneyForPeople(amount, 'USD').split(' ');
        expect(parseDecimalText(number.replaceAll(',', ''))).toEqual({ ok: true, value: amount });
      }),
    );
  });
});

describe('formatDecimalTextForPeople', () => {
  it("reshapes a record's spelling as text, to what formatAmountForPeople writes for its amount", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (units) => {
        const amount = asAmount(units);
        expect(isRecordSpelling(formatAmount(amount))).toBe(true);
        expect(formatDecimalTextForPeople(formatAmount(amount))).toBe(formatAmountForPeople(amount));
        expect(formatDecimalTextForPeople(formatAmountTrimmed(amount))).toBe(formatAmountForPeople(amount));
      }),
    );
  });

  it('reads other spellings through the grammar, and answers null for what is not a decimal', () => {
    expect(formatDecimalTextForPeople('1234.5')).toBe('1,234.50');
    expect(formatDecimalTextForPeople('-0.00000000')).toBe('0.00');
    expect(formatDecimalTextForPeople('007.00000000')).toBe('7.00');
    expect(formatDecimalTextForPeople('12.123456789')).toBeNull();
    expect(formatDecimalTextForPeople('1e3')).toBeNull();
    expect(formatDecimalTextForPeople('')).toBeNull();
    for (const text of ['-0.00000000', '007.00000000', '1.5', '1.500000000', ' 1.50000000'])
      expect(isRecordSpelling(text)).toBe(false);
  });

  it("writes a locale's separators when given one, and English in English as without one", () => {
    expect(formatDecimalTextForPeople('1234.5', 'de-DE')).toBe('1.234,50');
    expect(formatDecimalTextForPeople('1.00000000', 'de-DE')).toBe('1,00');
    expect(formatDecimalTextForPeople('0.00012500', 'fr-FR')).toBe('0,000125');
    expect(formatDecimalTextForPeople('two', 'de-DE')).toBeNull();
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (units) => {
        const text = formatAmount(asAmount(units));
        expect(formatDecimalTextForPeople(text, 'en')).toBe(formatDecimalTextForPeople(text));
      }),
    );
  });
});
