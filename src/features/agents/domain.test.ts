import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../core/clock.ts';
import { utcDayOf } from '../../core/day.ts';
import { type AmountE8, asAmount, ZERO } from '../../core/money.ts';
import {
  cardIntentFence,
  type Fence,
  hostFence,
  spendingFence,
  spentToday,
  totalAfterRelease,
  totalAfterSpend,
  x402Fence,
} from './domain.ts';

const usd = (whole: bigint): AmountE8 => asAmount(whole * 100_000_000n);
const NOW = new Date('2026-05-10T12:00:00Z');
const TODAY = utcDayOf(NOW).number;

const fence: Fence = {
  x402Hosts: ['api.example:443'],
  allowedMerchants: ['Acme Supplies'],
  perRequestUsd: usd(10n),
  dailyUsd: usd(25n),
  expiresAt: null,
};

describe('the fence', () => {
  it('lets a spend in when the merchant, currency and both caps allow it, and names the first that does not', () => {
    const spend = { amount: usd(10n), currency: 'usdc', merchant: ' acme supplies ', spentToday: usd(15n) };
    expect(spendingFence(fence, NOW, spend)).toEqual({ inside: true });
    expect(spendingFence(fence, NOW, { ...spend, merchant: 'Other' })).toMatchObject({ inside: false });
    expect(spendingFence(fence, NOW, { ...spend, currency: 'EUR' })).toEqual({
      inside: false,
      message: 'fence: the caps count USD; a EUR amount needs a person.',
    });
    expect(spendingFence(fence, NOW, { ...spend, amount: usd(11n) })).toEqual({
      inside: false,
      message: 'fence: over per_request_usd.',
    });
    expect(spendingFence(fence, NOW, { ...spend, spentToday: usd(16n) })).toEqual({
      inside: false,
      message: 'fence: over what is left of daily_usd.',
    });
    const expired = { ...fence, expiresAt: NOW };
    expect(spendingFence(expired, NOW, spend)).toEqual({
      inside: false,
      message: 'fence: expired; a person must approve this.',
    });
  });

  it('holds an x402 quote to the same caps and expiry, and its host to x402_hosts', () => {
    expect(x402Fence(fence, NOW, { amount: usd(10n), spentToday: usd(15n) })).toEqual({ inside: true });
    expect(x402Fence(fence, NOW, { amount: usd(11n), spentToday: ZERO })).toMatchObject({
      message: 'fence: over per_request_usd.',
    });
    expect(x402Fence(fence, NOW, { amount: usd(10n), spentToday: usd(16n) })).toMatchObject({
      message: 'fence: over what is left of daily_usd.',
    });
    expect(
      x402Fence({ ...fence, expiresAt: new Date(0) }, NOW, { amount: usd(1n), spentToday: ZERO }),
    ).toMatchObject({
      message: 'fence: expired; a person must approve this.',
    });
    expect(hostFence(fence.x402Hosts, 'api.example:443')).toEqual({ inside: true });
    expect(hostFence(fence.x402Hosts, 'evil.example')).toEqual({
      inside: false,
      message: 'fence: x402_hosts does not list evil.example.',
    });
  });

  it('lets a card intent in by merchant and per-request cap only', () => {
    expect(cardIntentFence(fence, NOW, { merchant: 'ACME SUPPLIES', ceilingUsd: usd(10n) })).toEqual({
      inside: true,
    });
    expect(cardIntentFence(fence, NOW, { merchant: 'Acme Supplies', ceilingUsd: usd(11n) })).toEqual({
      inside: false,
      message: 'fence: ceiling_usd is over per_request_usd.',
    });
    expect(cardIntentFence(fence, NOW, { merchant: 'Other', ceilingUsd: usd(1n) })).toMatchObject({
      inside: false,
    });
  });

  it('never lets the day total pass daily_usd, however the spends are cut', () => {
    fc.assert(
      fc.property(fc.array(fc.bigInt({ min: 1n, max: 12n }), { maxLength: 20 }), (amounts) => {
        let total = { day: null as number | null, spentUsd: ZERO };
        for (const whole of amounts) {
          const spend = {
            amount: usd(whole),
            currency: 'USD',
            merchant: null,
            spentToday: spentToday(total, NOW),
          };
          if (spendingFence(fence, NOW, spend).inside) total = totalAfterSpend(total, NOW, usd(whole));
        }
        expect(spentToday(total, NOW) <= fence.dailyUsd).toBe(true);
      }),
    );
  });
});

describe("the agent's day total", () => {
  it('counts only the UTC day it was stamped with', () => {
    const total = { day: TODAY, spentUsd: usd(5n) };
    expect(spentToday(total, NOW)).toBe(usd(5n));
    expect(spentToday(total, new Date(utcDayOf(NOW).end.getTime()))).toBe(ZERO);
    expect(spentToday({ day: null, spentUsd: ZERO }, NOW)).toBe(ZERO);
  });

  it('adds a spend to the day, and starts a new day from the spend', () => {
    expect(totalAfterSpend({ day: TODAY, spentUsd: usd(5n) }, NOW, usd(2n))).toEqual({
      day: TODAY,
      spentUsd: usd(7n),
    });
    const tomorrow = new Date(NOW.getTime() + DAY_MS);
    expect(totalAfterSpend({ day: TODAY, spentUsd: usd(5n) }, tomorrow, usd(2n))).toEqual({
      day: TODAY + 1,
      spentUsd: usd(2n),
    });
  });

  it('gives a release back to its own day only, never below zero', () => {
    const total = { day: TODAY, spentUsd: usd(5n) };
    expect(totalAfterRelease(total, NOW, usd(2n))).toEqual({ day: TODAY, spentUsd: usd(3n) });
    expect(totalAfterRelease(total, NOW, usd(9n))).toEqual({ day: TODAY, spentUsd: ZERO });
    const yesterday = new Date(NOW.getTime() - DAY_MS);
    expect(totalAfterRelease(total, yesterday, usd(2n))).toBe(total);
  });
});
