import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asAmount, UNIT } from '../../core/money.ts';
import {
  afterSettlement,
  cancelDecision,
  checkMint,
  currenciesFit,
  expiryFor,
  TAG_LIMIT,
  tagLadder,
  visibleStatus,
} from './domain.ts';

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

describe('tagLadder', () => {
  const price = asAmount(5n * UNIT);
  it('climbs down from the price in token units, for less than one cent', () => {
    expect(tagLadder(price, 6)).toEqual({ top: price, step: 100n, rungs: 10_000 });
    expect(tagLadder(price, 8)).toEqual({ top: price, step: 1n, rungs: 1_000_000 });
  });

  it('has no ladder without token decimals, one rung when a unit is a cent or more, and stays above zero', () => {
    expect(tagLadder(price, undefined)).toBeNull();
    expect(tagLadder(price, 2)?.rungs).toBe(1);
    expect(tagLadder(price, 0)?.rungs).toBe(1);
    expect(tagLadder(asAmount(300n), 6)?.rungs).toBe(3);
  });

  it('ends every rung at or below the price, above zero and less than one cent below it', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.integer({ min: 0, max: 8 }),
        (amount, decimals) => {
          const ladder = tagLadder(asAmount(amount), decimals)!;
          const lowest = amount - BigInt(ladder.rungs - 1) * ladder.step;
          expect(ladder.rungs >= 1).toBe(true);
          expect(lowest > 0n && amount - lowest < TAG_LIMIT).toBe(true);
          // One rung more would leave the rules.
          const below = lowest - ladder.step;
          expect(below <= 0n || amount - below >= TAG_LIMIT).toBe(true);
        },
      ),
    );
  });
});

describe('cancelDecision', () => {
  it('lapses an active request now, answers a cancelled one, and refuses a paid one', () => {
    expect(cancelDecision('active')).toBe('lapse_now');
    expect(cancelDecision('cancelled')).toBe('already_cancelled');
    expect(cancelDecision('paid')).toBe('refuse_paid');
  });
});
