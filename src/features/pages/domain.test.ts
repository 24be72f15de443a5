import { describe, expect, it } from 'vitest';
import { asAmount } from '../../core/money.ts';
import {
  type AccountView,
  bankReference,
  epcPayload,
  groupedIban,
  judgeTestCard,
  railsFor,
} from './domain.ts';

const now = new Date('2026-06-01T00:00:00Z');
const account = (id: string, kind: string, currency: string, address: string | null = null): AccountView => ({
  id,
  kind,
  requisites: null,
  name: id,
  currency,
  address,
  network: kind === 'crypto' ? 'local' : null,
  details: 'IBAN DE89…',
});
const peg = (currency: string) => (currency === 'USDC' ? 'USD' : currency);

describe('pages domain', () => {
  it('offers stablecoin, bank transfer and card when the space has fitting accounts', () => {
    const rails = railsFor(
      { accountId: 'w', currency: 'USD', token: 'pr_abcdefghijkl' },
      [account('b', 'bank', 'USD'), account('w', 'crypto', 'USDC', '0xabc'), account('e', 'bank', 'EUR')],
      peg,
      true,
    );
    expect(rails.stablecoin?.account.id).toBe('w');
    expect(rails.bank?.account.id).toBe('b');
    expect(rails.bank?.reference).toBe(bankReference('pr_abcdefghijkl'));
    expect(rails.card).toBe(true);
  });

  it('offers no stablecoin rail without an address and no bank rail in another currency', () => {
    const rails = railsFor(
      { accountId: 'w', currency: 'EUR', token: 'pr_x' },
      [account('w', 'crypto', 'USDC'), account('u', 'bank', 'USD')],
      peg,
      false,
    );
    expect(rails).toEqual({ stablecoin: null, bank: null, card: false });
  });

  it('judges test cards like the usual test numbers', () => {
    const card = (number: string, exp = '12/34', cvc = '123') => judgeTestCard({ number, exp, cvc }, now);
    expect(card('4242 4242 4242 4242')).toEqual({ ok: true });
    expect(card('4000000000000002')).toMatchObject({ ok: false, code: 'card_declined' });
    expect(card('4242424242424241')).toMatchObject({ ok: false, code: 'invalid' });
    expect(card('4242424242424242', '13/34')).toMatchObject({ ok: false, code: 'invalid' });
    expect(card('4242424242424242', '05/26')).toMatchObject({ ok: false, code: 'card_declined' });
    expect(card('4242424242424242', '12/34', '12')).toMatchObject({ ok: false, code: 'invalid' });
  });
});

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
