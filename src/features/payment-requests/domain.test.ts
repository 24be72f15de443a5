import { describe, expect, it } from 'vitest';
import { asAmount, UNIT } from '../../core/money.ts';
import { afterSettlement, checkMint, currenciesFit, expiryFor, visibleStatus } from './domain.ts';

const usdc = { kind: 'crypto', currency: 'USDC' };
const eurBank = { kind: 'bank', currency: 'EUR' };

describe('payment request rules', () => {
  it('keeps the one-dollar floor on accounts a machine pays on chain, and only there', () => {
    expect(checkMint(usdc, 'USD', asAmount(UNIT - 1n))?.code).toBe('amount_not_accepted');
    expect(checkMint(usdc, 'USD', asAmount(UNIT))).toBeNull();
    expect(checkMint({ kind: 'bank', currency: 'USD' }, 'USD', asAmount(1n))).toBeNull();
  });

  it('refuses amounts finer than the token moves (USDC: six decimals)', () => {
    expect(checkMint(usdc, 'USDC', asAmount(UNIT + 1n))?.code).toBe('amount_not_accepted');
    expect(checkMint(usdc, 'USDC', asAmount(UNIT + 100n))).toBeNull();
  });

  it('lets a USD price land in USDC, never in another currency', () => {
    expect(currenciesFit('USDC', 'USD')).toBe(true);
    expect(currenciesFit('USD', 'USDC')).toBe(false);
    expect(checkMint(eurBank, 'USD', asAmount(UNIT))?.code).toBe('currency_mismatch');
  });

  it('defaults the deadline to a day and refuses ones in the past or beyond a year', () => {
    const now = new Date('2026-05-01T00:00:00Z');
    expect(expiryFor(now, null)).toEqual({ ok: true, at: new Date('2026-05-02T00:00:00Z') });
    expect(expiryFor(now, '2026-04-30T00:00:00Z').ok).toBe(false);
    expect(expiryFor(now, '2027-05-02T00:00:00Z').ok).toBe(false);
    expect(expiryFor(now, '2026-05-01T02:00:00+02:00').ok).toBe(false);
  });

  it('shows an active request past its deadline as cancelled', () => {
    const now = new Date('2026-05-01T00:00:00Z');
    expect(visibleStatus('active', new Date('2026-05-01T00:00:00Z'), now)).toBe('cancelled');
    expect(visibleStatus('active', new Date('2026-05-01T00:00:01Z'), now)).toBe('active');
    expect(visibleStatus('paid', new Date('2026-04-01T00:00:00Z'), now)).toBe('paid');
  });

  it('adds partial payments until the total is reached', () => {
    const total = asAmount(10n * UNIT);
    const first = afterSettlement(total, asAmount(0n), asAmount(4n * UNIT));
    expect(first).toEqual({ received: 4n * UNIT, status: 'active' });
    expect(afterSettlement(total, first.received, asAmount(6n * UNIT))).toEqual({
      received: 10n * UNIT,
      status: 'paid',
    });
  });
});
