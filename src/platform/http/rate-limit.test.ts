import { describe, expect, it } from 'vitest';
import { decide } from './rate-limit.ts';

describe('decide', () => {
  const now = 1_000_000_000_000; // a bucket boundary: 1e9 seconds is a multiple of 10

  it('admits the 240th call of a window and refuses the 241st', () => {
    expect(decide({ total: 240, oldestBucket: 100_000_000 }, 1, 0, now).allowed).toBe(true);
    expect(decide({ total: 241, oldestBucket: 100_000_000 }, 1, 0, now).allowed).toBe(false);
  });

  it('numbers the calls of one batch in order, so exactly the ones past the limit are refused', () => {
    const totals = { total: 245, oldestBucket: 100_000_000 };
    const allowed = Array.from({ length: 10 }, (_, index) => decide(totals, 10, index, now).allowed);
    expect(allowed).toEqual([true, true, true, true, true, false, false, false, false, false]);
  });

  it('counts remaining calls down to zero and never below', () => {
    expect(decide({ total: 1, oldestBucket: null }, 1, 0, now).remaining).toBe(239);
    expect(decide({ total: 300, oldestBucket: null }, 1, 0, now).remaining).toBe(0);
  });

  it('tells when the oldest bucket leaves the window', () => {
    // The oldest bucket started 60 s ago; the window covers 70 s, so 10 s remain.
    expect(decide({ total: 241, oldestBucket: 100_000_000 - 6 }, 1, 0, now).resetSeconds).toBe(10);
  });
});
