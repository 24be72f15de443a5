import { describe, expect, it } from 'vitest';
import { type AccountView, bankReference, judgeTestCard, railsFor } from './domain.ts';

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
