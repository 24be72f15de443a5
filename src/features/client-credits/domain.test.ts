import { describe, expect, it } from 'vitest';
import { asAmount } from '../../core/money.ts';
import { adjustmentKind } from './domain.ts';

describe('adjustmentKind', () => {
  it('tells a grant, a correction and a refund apart, and refuses zero and a positive refund', () => {
    expect(adjustmentKind(asAmount(5n), false)).toEqual({ ok: true, kind: 'grant' });
    expect(adjustmentKind(asAmount(-5n), false)).toEqual({ ok: true, kind: 'correction' });
    expect(adjustmentKind(asAmount(-5n), true)).toEqual({ ok: true, kind: 'refund' });
    expect(adjustmentKind(asAmount(0n), false).ok).toBe(false);
    expect(adjustmentKind(asAmount(5n), true)).toMatchObject({ ok: false, field: 'amount' });
  });
});
