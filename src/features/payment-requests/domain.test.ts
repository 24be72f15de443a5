import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asAmount, UNIT } from '../../core/money.ts';
import {
  afterSettlement,
  askedAmount,
  checkMint,
  currenciesFit,
  expiryFor,
  TAG_LIMIT,
  tagWindow,
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

describe('askedAmount', () => {
  const price = asAmount(5n * UNIT);
  it('asks for the price while no open request asks for it, and lowers it by whole token units otherwise', () => {
    expect(askedAmount(price, 6, new Set())).toBe(price);
    expect(askedAmount(price, 6, new Set([price as bigint]))).toBe(price - 100n);
    expect(askedAmount(price, 6, new Set([price as bigint, price - 100n]))).toBe(price - 200n);
    // A gap is reused: the fewest steps that are free.
    expect(askedAmount(price, 6, new Set([price as bigint, price - 200n]))).toBe(price - 100n);
  });

  it('leaves accounts without token decimals at the price, and refuses once every tag under a cent is taken', () => {
    expect(askedAmount(price, undefined, new Set([price as bigint]))).toBe(price);
    const all = new Set(Array.from({ length: 10_000 }, (_, step) => (price as bigint) - BigInt(step) * 100n));
    expect(askedAmount(price, 6, all)).toBeNull();
  });

  it('never asks for a taken amount, and stays within one cent below the price in token steps', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 40 }), (steps) => {
        const taken = new Set(steps.map((step) => (price as bigint) - BigInt(step) * 100n));
        const asked = askedAmount(price, 6, taken)!;
        expect(taken.has(asked)).toBe(false);
        const tag = (price as bigint) - asked;
        expect(tag >= 0n && tag < TAG_LIMIT && tag % 100n === 0n).toBe(true);
      }),
    );
  });

  it('reads only the tag window: amounts outside it never change the answer (so a mint reads only them)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -20_000, max: 20_000 }), { maxLength: 60 }),
        fc.integer({ min: 100, max: 500 }),
        (steps, cents) => {
          const at = asAmount(BigInt(cents) * (UNIT / 100n));
          const taken = new Set(steps.map((step) => (at as bigint) - BigInt(step) * 100n));
          const range = tagWindow(at);
          const inside = new Set([...taken].filter((due) => due > range.above && due <= range.atMost));
          const asked = askedAmount(at, 6, taken);
          expect(askedAmount(at, 6, inside)).toBe(asked);
          if (asked !== null) expect(asked > range.above && asked <= range.atMost).toBe(true);
        },
      ),
    );
  });
});
