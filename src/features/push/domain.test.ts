import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { monthOf, rowsLeft, splitRepeats, validateRow } from './domain.ts';

const good = {
  external_id: 'x-1',
  account_key: 'bank',
  currency: 'eur',
  occurred_on: '2026-03-31',
  amount: '-12.5',
  payee: 'Shop',
  note: '',
};

describe('push rows', () => {
  it('accepts a full row and normalises the currency', () => {
    const result = validateRow(good, 0);
    expect(result.ok && result.row).toMatchObject({
      externalId: 'x-1',
      currency: 'EUR',
      amount: -1_250_000_000n,
    });
  });

  it.each([
    [null, 'A row must be an object.'],
    [{ ...good, external_id: '' }, 'external_id must be 1 to 128 characters.'],
    [{ ...good, external_id: 'e'.repeat(129) }, 'external_id must be 1 to 128 characters.'],
    [{ ...good, account_key: undefined }, 'account_key is required.'],
    [{ ...good, account_key: 7 }, 'account_key must be a string.'],
    [{ ...good, currency: 'E' }, 'currency must be 2 to 12 characters.'],
    [{ ...good, currency: 'E U' }, 'currency must be 2 to 12 letters or digits.'],
    [{ ...good, occurred_on: '2026-02-30' }, 'occurred_on must be a date (YYYY-MM-DD).'],
    [{ ...good, amount: '1e3' }, 'amount is not a decimal.'],
    [{ ...good, amount: '0.000000001' }, 'amount has more than 8 decimal places.'],
    [{ ...good, amount: 0 }, 'amount must not be zero: negative is money out, positive money in.'],
    [{ ...good, amount: true }, 'amount must be a decimal string or a number.'],
    [{ ...good, amount: '10000000000000000.1' }, 'amount must be between -1e16 and 1e16.'],
    [{ ...good, payee: 'p'.repeat(201) }, 'payee must be 0 to 200 characters.'],
    [{ ...good, note: 'n'.repeat(501) }, 'note must be 0 to 500 characters.'],
  ])('refuses %j: %s', (row, detail) => {
    const result = validateRow(row, 3);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ index: 3, error: 'invalid_row', detail });
  });

  it('books the first of repeated external_ids and counts the rest as duplicates', () => {
    const rows = ['a', 'b', 'a', 'a'].map((id, index) => {
      const result = validateRow({ ...good, external_id: id }, index);
      if (!result.ok) throw new Error('bad fixture');
      return result.row;
    });
    const { first, repeats } = splitRepeats(rows);
    expect(first.map((row) => row.index)).toEqual([0, 1]);
    expect(repeats.map((row) => row.index)).toEqual([2, 3]);
  });

  it('counts what a month still allows', () => {
    expect(rowsLeft(1000, 998)).toBe(2);
    expect(rowsLeft(1000, 1200)).toBe(0);
    expect(rowsLeft(null, 10 ** 9)).toBe(Number.POSITIVE_INFINITY);
    expect(monthOf(new Date('2026-11-22T03:00:00Z'))).toBe('2026-11-01');
  });

  it('takes exactly the real calendar dates, leap days included (checked against Date)', () => {
    const padded = (value: number, width: number) => String(value).padStart(width, '0');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 0, max: 13 }),
        fc.integer({ min: 0, max: 32 }),
        (year, month, day) => {
          const text = `${padded(year, 4)}-${padded(month, 2)}-${padded(day, 2)}`;
          const date = new Date(`${text}T00:00:00Z`);
          const real = year >= 1 && !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text;
          const verdict = validateRow({ ...good, occurred_on: text }, 0);
          expect(verdict.ok).toBe(real);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('counts text in code points, a surrogate pair as one and a lone surrogate as one', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom('a', '\u00e9', '\u{1f600}', '\ud800', '\udc00'),
          minLength: 150,
          maxLength: 260,
        }),
        (payee) => {
          const verdict = validateRow({ ...good, payee }, 0);
          expect(verdict.ok).toBe([...payee].length <= 200);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
