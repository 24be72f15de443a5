import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.ts';
import {
  type ContactAddressInput,
  checkBic,
  checkIban,
  checkRoutingNumber,
  checkSortCode,
  ibanCheckDigits,
  mod97,
  normalizeAddresses,
  normalizeRequisites,
} from './domain.ts';

const VALID_IBANS = [
  'GB82 WEST 1234 5698 7654 32',
  'DE89 3704 0044 0532 0130 00',
  'FR14 2004 1010 0505 0001 3M02 606',
  'NL91ABNA0417164300',
  'be68 5390 0754 7034',
];

function refusal(run: () => unknown): { field: unknown; detail: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return { field: error.details?.field, detail: error.message };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('mod97', () => {
  it('reads letters as 10 to 35 and matches BigInt arithmetic', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9A-Z]{1,40}$/), (text) => {
        const digits = [...text].map((char) => String(Number.parseInt(char, 36))).join('');
        expect(mod97(text)).toBe(Number(BigInt(digits) % 97n));
      }),
    );
  });
});

describe('checkIban', () => {
  it.each(VALID_IBANS)('accepts %s and returns it compact and upper case', (raw) => {
    const checked = checkIban(raw);
    expect(checked).toEqual({ ok: true, value: raw.replaceAll(' ', '').toUpperCase() });
  });

  it.each([
    ['one digit changed', 'GB82 WEST 1234 5698 7654 33'],
    ['check digits changed', 'DE88 3704 0044 0532 0130 00'],
    ['two characters swapped', 'FR14 2004 1010 0505 0001 M302 606'],
    ['too short', 'GB82 WEST 1234'],
    ['too long', 'GB82 WEST 1234 5698 7654 3212 3456 7890 12'],
    ['bad characters', 'GB82 WEST 1234 5698 7654 3!'],
    ['no country letters', '1282 WEST 1234 5698 7654 32'],
    ['check digits 01 that pass mod-97 where 98 would', 'GB01 WEST 1234 5698 7654 32'],
    ['empty', ''],
  ])('refuses an IBAN with %s', (_case, raw) => {
    expect(checkIban(raw).ok).toBe(false);
  });

  it('accepts any IBAN built with ibanCheckDigits', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Z]{2}$/),
        fc.stringMatching(/^[0-9A-Z]{11,30}$/),
        (country, bban) => {
          const iban = `${country}${ibanCheckDigits(country, bban)}${bban}`;
          // A computed 01 or 99 can never appear: 98 - remainder stays within 2..98.
          expect(checkIban(iban)).toEqual({ ok: true, value: iban });
        },
      ),
    );
  });

  it('refuses every valid IBAN with one digit of its BBAN changed', () => {
    const bases = VALID_IBANS.map((raw) => raw.replaceAll(' ', '').toUpperCase());
    const mutation = fc.constantFrom(...bases).chain((iban) => {
      const digitPositions = [...iban].flatMap((char, index) =>
        index >= 4 && /[0-9]/.test(char) ? [index] : [],
      );
      return fc.record({
        iban: fc.constant(iban),
        position: fc.constantFrom(...digitPositions),
        shift: fc.integer({ min: 1, max: 9 }),
      });
    });
    fc.assert(
      fc.property(mutation, ({ iban, position, shift }) => {
        const digit = (Number(iban[position]) + shift) % 10;
        const changed = `${iban.slice(0, position)}${digit}${iban.slice(position + 1)}`;
        expect(changed).not.toBe(iban);
        expect(checkIban(changed).ok).toBe(false);
      }),
    );
  });
});

describe('checkRoutingNumber', () => {
  it.each(['011000015', '021000021', '111000025'])('accepts %s', (routing) => {
    expect(checkRoutingNumber(routing)).toEqual({ ok: true, value: routing });
  });

  it.each([
    ['a wrong check digit', '021000022'],
    ['8 digits', '02100002'],
    ['10 digits', '0210000210'],
    ['letters', '02100002A'],
    ['a prefix no bank is assigned', '500000005'],
  ])('refuses %s', (_case, routing) => {
    expect(checkRoutingNumber(routing).ok).toBe(false);
  });
});

describe('checkBic', () => {
  it.each([
    ['DEUTDEFF', 'DEUTDEFF'],
    ['deutdeff500', 'DEUTDEFF500'],
    ['NWBKGB2L', 'NWBKGB2L'],
  ])('accepts %s', (raw, value) => {
    expect(checkBic(raw)).toEqual({ ok: true, value });
  });

  it.each(['DEUTDEF', 'DEUTDEFF5', 'DEUTDEFF50', 'DEU1DEFF', 'DEUTD3FF', 'DEUT DEFF', ''])(
    'refuses %j',
    (raw) => {
      expect(checkBic(raw).ok).toBe(false);
    },
  );
});

describe('checkSortCode', () => {
  it.each(['123456', '12-34-56'])('accepts %s and keeps 6 digits', (raw) => {
    expect(checkSortCode(raw)).toEqual({ ok: true, value: '123456' });
  });

  it.each(['12345', '1234567', '12 34 56', '12-3456', '1-234-56', 'ab-cd-ef'])('refuses %j', (raw) => {
    expect(checkSortCode(raw).ok).toBe(false);
  });
});

describe('normalizeRequisites', () => {
  it('normalises sepa and turns a missing or empty bic into null', () => {
    expect(
      normalizeRequisites(
        { scheme: 'sepa', iban: 'de89 3704 0044 0532 0130 00', holder: 'Ann', bic: '' },
        'r',
      ),
    ).toEqual({
      scheme: 'sepa',
      iban: 'DE89370400440532013000',
      bic: null,
      holder: 'Ann',
    });
  });

  it('names the path of the field it refuses', () => {
    const bad = { scheme: 'sepa', iban: 'DE88370400440532013000', holder: 'Ann' } as const;
    expect(refusal(() => normalizeRequisites(bad, 'addresses.3.requisites')).field).toBe(
      'addresses.3.requisites.iban',
    );
    const badBic = { scheme: 'swift', account_number: '1', swift_bic: 'XX', holder: 'Ann' } as const;
    expect(refusal(() => normalizeRequisites(badBic, 'r')).field).toBe('r.swift_bic');
    const blankHolder = {
      scheme: 'uk',
      account_number: '12345678',
      sort_code: '12-34-56',
      holder: '  ',
    } as const;
    expect(refusal(() => normalizeRequisites(blankHolder, 'r')).field).toBe('r.holder');
  });

  it('compacts a swift account number and refuses punctuation in it', () => {
    const swift = {
      scheme: 'swift',
      account_number: 'gb82 west 1234',
      swift_bic: 'nwbkgb2l',
      holder: 'Ann',
    } as const;
    expect(normalizeRequisites(swift, 'r')).toMatchObject({
      account_number: 'GB82WEST1234',
      swift_bic: 'NWBKGB2L',
      bank_name: null,
    });
    expect(refusal(() => normalizeRequisites({ ...swift, account_number: '12/34' }, 'r')).field).toBe(
      'r.account_number',
    );
  });
});

describe('normalizeAddresses', () => {
  const address = (isPrimary: boolean): ContactAddressInput => ({
    label: '',
    address: '0xabc',
    chain: null,
    network: null,
    details: '',
    is_primary: isPrimary,
    requisites: null,
  });

  it('makes the first address primary when none is marked', () => {
    expect(normalizeAddresses([address(false), address(false)]).map((a) => a.is_primary)).toEqual([
      true,
      false,
    ]);
  });

  it('keeps the one marked primary', () => {
    expect(normalizeAddresses([address(false), address(true)]).map((a) => a.is_primary)).toEqual([
      false,
      true,
    ]);
  });

  it('refuses two primary addresses, naming the second', () => {
    expect(refusal(() => normalizeAddresses([address(true), address(false), address(true)])).field).toBe(
      'addresses.2.is_primary',
    );
  });

  it('accepts no addresses', () => {
    expect(normalizeAddresses([])).toEqual([]);
  });
});
