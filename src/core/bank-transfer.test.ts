import { describe, expect, it } from 'vitest';
import { epcPayload, groupedIban } from './bank-transfer.ts';
import { asAmount } from './money.ts';

describe('the GiroCode payload (EPC069-12)', () => {
  const transfer = {
    bic: 'COBADEFFXXX',
    name: 'Nordlicht Studio GmbH',
    iban: 'DE89370400440532013000',
    reference: 'TB-ABC123XYZ9',
  };

  it('writes the twelve-line order: service tag, version 002, UTF-8, SCT, BIC, name, IBAN, EUR amount, no purpose, no structured reference, the reference', () => {
    expect(epcPayload({ ...transfer, amount: asAmount(123_450_000_000n) })?.split('\n')).toEqual([
      'BCD',
      '002',
      '1',
      'SCT',
      'COBADEFFXXX',
      'Nordlicht Studio GmbH',
      'DE89370400440532013000',
      'EUR1234.50',
      '',
      '',
      'TB-ABC123XYZ9',
    ]);
  });

  it('leaves the BIC out when there is none, and cuts the name to 70 characters', () => {
    const lines = epcPayload({
      ...transfer,
      bic: null,
      name: 'N'.repeat(90),
      amount: asAmount(100_000_000n),
    })!.split('\n');
    expect(lines[4]).toBe('');
    expect(lines[5]).toBe('N'.repeat(70));
    expect(lines[7]).toBe('EUR1.00');
  });

  it('gives no code for an amount that is not whole cents, zero or above 999,999,999.99 euros', () => {
    expect(epcPayload({ ...transfer, amount: asAmount(100_500_000n + 1n) })).toBeNull();
    expect(epcPayload({ ...transfer, amount: asAmount(0n) })).toBeNull();
    expect(epcPayload({ ...transfer, amount: asAmount(100_000_000_000n * 100_000_000n) })).toBeNull();
    expect(epcPayload({ ...transfer, amount: asAmount(99_999_999_999n * 1_000_000n) })).not.toBeNull();
  });
});

describe('groupedIban', () => {
  it('groups in fours', () => {
    expect(groupedIban('DE89370400440532013000')).toBe('DE89 3704 0044 0532 0130 00');
  });
});
