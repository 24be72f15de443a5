import type { AmountE8 } from '../../core/money.ts';
import type { PayoutStatus } from '../../platform/db/schema.ts';

// The rules of money out, with no I/O: which status may follow which, which approval rule a
// payment meets, and which policy rule (if any) it breaks.

export const RAILS = ['book', 'bank', 'chain'] as const;
export type Rail = (typeof RAILS)[number];

export const PAYOUT_STATUSES = [
  'awaiting_approval',
  'approved',
  'executing',
  'executed',
  'blocked',
  'rejected',
  'failed',
  'cancelled',
] as const satisfies readonly PayoutStatus[];

export const POLICY_KINDS = [
  'max_per_payment',
  'max_per_day',
  'blocked_destination',
  'allowed_currencies',
] as const;
export type PolicyKind = (typeof POLICY_KINDS)[number];

export type BlockReason =
  | 'policy_max_per_payment'
  | 'policy_max_per_day'
  | 'policy_blocked_destination'
  | 'policy_currency'
  | 'screening_hold';

/** Which status may follow which; everything else is refused with `payment_state`. */
const NEXT: Record<PayoutStatus, readonly PayoutStatus[]> = {
  awaiting_approval: ['approved', 'rejected', 'cancelled', 'blocked'],
  approved: ['executing', 'blocked', 'cancelled', 'failed'],
  // A reorganisation that removes a chain transfer moves an executed payment back to executing.
  executing: ['executed', 'cancelled', 'failed', 'blocked'],
  executed: ['executing'],
  blocked: ['awaiting_approval', 'approved', 'rejected', 'cancelled'],
  rejected: [],
  failed: [],
  cancelled: [],
};

export function canMove(from: PayoutStatus, to: PayoutStatus): boolean {
  return NEXT[from].includes(to);
}

/** States a person may still cancel from: nothing has left the account yet. */
/**
 * The reason a payment's history records beside a change of status: a block's or a failure's
 * code, or a rejection's sentence; none for the other steps.
 */
export function statusChangeReason(change: {
  status: PayoutStatus;
  blocked_reason?: string | null | undefined;
  reject_reason?: string | null | undefined;
}): string | null {
  if (change.status === 'blocked' || change.status === 'failed') return change.blocked_reason ?? null;
  if (change.status === 'rejected') return change.reject_reason ?? null;
  return null;
}

export function isCancellable(status: PayoutStatus, txHash: string | null): boolean {
  if (status === 'executing') return txHash === null;
  return status === 'awaiting_approval' || status === 'approved' || status === 'blocked';
}

export type ApprovalRule = { id: string; minAmount: AmountE8; currency: string; requiredApprovals: number };

/**
 * The rule a payment meets: among rules of its currency whose minimum it reaches, the highest
 * minimum (and, between equal minimums, the most approvals). Undefined: no approval needed.
 */
export function matchApprovalRule(
  rules: readonly ApprovalRule[],
  amount: AmountE8,
  currency: string,
): ApprovalRule | undefined {
  let best: ApprovalRule | undefined;
  for (const rule of rules) {
    if (rule.currency !== currency || rule.minAmount > amount) continue;
    if (
      best === undefined ||
      rule.minAmount > best.minAmount ||
      (rule.minAmount === best.minAmount && rule.requiredApprovals > best.requiredApprovals)
    ) {
      best = rule;
    }
  }
  return best;
}

export type PolicyRule =
  | { kind: 'max_per_payment'; amount: AmountE8; currency: string }
  | { kind: 'max_per_day'; amount: AmountE8; currency: string }
  | { kind: 'blocked_destination'; destination: string }
  | { kind: 'allowed_currencies'; currencies: string[] };

export type PolicySubject = {
  amount: AmountE8;
  currency: string;
  /** Destination and payee as written. */
  destinations: string[];
  /** What this payment's currency already left (or is leaving) today, per max_per_day rule currency. */
  leftToday: AmountE8;
};

/**
 * How a destination or payee is compared with a `blocked_destination` rule: the screening
 * feature's normalizeDestination (invisible characters, look-alikes, case, accents, spaces),
 * handed in by the caller so this file stays pure and the rule lives in one place.
 */
export type DestinationForm = (destination: string) => string;

/** The first rule the payment breaks, checked in a fixed order, or undefined. */
export function policyBreach(
  rules: readonly PolicyRule[],
  subject: PolicySubject,
  normalizeDestination: DestinationForm,
): BlockReason | undefined {
  const destinations = subject.destinations.map(normalizeDestination).filter((d) => d !== '');
  for (const rule of rules) {
    if (rule.kind === 'allowed_currencies' && !rule.currencies.includes(subject.currency)) {
      return 'policy_currency';
    }
  }
  for (const rule of rules) {
    if (
      rule.kind === 'blocked_destination' &&
      destinations.includes(normalizeDestination(rule.destination))
    ) {
      return 'policy_blocked_destination';
    }
  }
  for (const rule of rules) {
    if (
      rule.kind === 'max_per_payment' &&
      rule.currency === subject.currency &&
      subject.amount > rule.amount
    ) {
      return 'policy_max_per_payment';
    }
  }
  for (const rule of rules) {
    if (
      rule.kind === 'max_per_day' &&
      rule.currency === subject.currency &&
      subject.leftToday + subject.amount > rule.amount
    ) {
      return 'policy_max_per_day';
    }
  }
  return undefined;
}

/** The UTC day [start, end) that `at` falls in: the book's day for max_per_day. */
export function dayOf(at: Date): { start: Date; end: Date } {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  return { start, end: new Date(start.getTime() + 24 * 60 * 60 * 1000) };
}
