import type { AmountE8 } from '../../core/money.ts';

// Rules of adjustments made by hand to a client's prepaid credit, with no I/O.

export type AdjustmentKind = 'grant' | 'correction' | 'refund';

/**
 * What an adjustment is: a grant raises the credit, a correction lowers it, a refund lowers it
 * and owes the client the money back. Zero changes nothing and is refused; a refund is always
 * below zero (DECISIONS: a refund is a negative adjustment with `refund: true`).
 */
export function adjustmentKind(
  amount: AmountE8,
  refund: boolean,
): { ok: true; kind: AdjustmentKind } | { ok: false; detail: string; field: string } {
  if (amount === 0n) return { ok: false, detail: 'An adjustment of zero changes nothing.', field: 'amount' };
  if (refund)
    return amount < 0n
      ? { ok: true, kind: 'refund' }
      : { ok: false, detail: 'A refund lowers the credit: give it as a negative amount.', field: 'amount' };
  return { ok: true, kind: amount > 0n ? 'grant' : 'correction' };
}

/** The expense a grant books (and a correction takes back): credit given away, not paid for. */
export const GRANT_EXPENSE = 'credit_grant';
