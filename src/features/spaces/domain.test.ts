import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  COUNTRY_CODES,
  displayNameOf,
  documentNumber,
  HANDLE_PATTERN,
  handleFrom,
  inClosedPeriod,
} from './domain.ts';

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

describe('document numbers', () => {
  it('writes the prefix and at least six digits', () => {
    expect(documentNumber('INV-', 1)).toBe('INV-000001');
    expect(documentNumber('CN-', 1234567)).toBe('CN-1234567');
    expect(documentNumber('', 42)).toBe('000042');
  });
});

describe('the name shown for a business', () => {
  it('is the trading name, else the legal name, else the book name', () => {
    expect(displayNameOf({ trading_name: 'Nordlicht', legal_name: 'Nordlicht GmbH' }, 'Book')).toBe(
      'Nordlicht',
    );
    expect(displayNameOf({ trading_name: '  ', legal_name: 'Nordlicht GmbH' }, 'Book')).toBe(
      'Nordlicht GmbH',
    );
    expect(displayNameOf({ trading_name: '', legal_name: '' }, 'Book')).toBe('Book');
  });
});

describe('country codes', () => {
  it('hold ISO 3166-1 alpha-2 countries and leave out groupings and withdrawn codes', () => {
    for (const code of ['DE', 'FR', 'GB', 'US', 'JP', 'BR', 'CH']) expect(COUNTRY_CODES).toContain(code);
    for (const code of ['EU', 'UN', 'ZZ', 'UK', 'SU', 'DD', 'YU', 'XK', 'QO'])
      expect(COUNTRY_CODES).not.toContain(code);
    expect(COUNTRY_CODES.length).toBeGreaterThan(240);
  });
});

describe('the public handle made from a name', () => {
  it('keeps the words of the name without their accents', () => {
    expect(handleFrom('Acmé Ltd.', 'a1b2c3')).toBe('acme-ltd-a1b2c3');
    expect(handleFrom('   ', 'a1b2c3')).toBe('space-a1b2c3');
  });

  it('cuts a long name between words, never leaving a hyphen at the cut', () => {
    expect(handleFrom('é'.repeat(120), 'a1b2c3')).toBe(`${'e'.repeat(40)}-a1b2c3`);
    expect(handleFrom('ab '.repeat(30), 'a1b2c3')).toBe(`${'ab-'.repeat(12)}ab-a1b2c3`);
  });

  it('always makes a handle the database accepts, whatever the name', () => {
    const pattern = new RegExp(HANDLE_PATTERN);
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (name) => {
        const handle = handleFrom(name, 'a1b2c3');
        expect(handle).toMatch(pattern);
        expect(handle.length).toBeGreaterThanOrEqual(3);
        expect(handle.length).toBeLessThanOrEqual(48);
      }),
    );
  });
});
