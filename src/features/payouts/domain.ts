import type { AmountE8 } from '../../core/money.ts';
import { canAdminister, canWrite, type Role } from '../../core/roles.ts';
import type { PayoutStatus } from '../../platform/db/schema.ts';

// The rules of money out, with no I/O: which status may follow which, who may take which action
// on a payment (the services refuse by it, the page shows its buttons by it), which approval
// rule a payment meets, and which policy rule (if any) it breaks.

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

/**
 * Which status may follow which; every change of status is checked against it (execution.ts's
 * `move`), and everything else is refused with `payment_state`. A new payment is written
 * `approved` and routed in the same transaction, so its first step may be to awaiting_approval.
 */
const NEXT: Record<PayoutStatus, readonly PayoutStatus[]> = {
  awaiting_approval: ['approved', 'rejected', 'cancelled', 'blocked'],
  // A book payment executes as soon as it is approved; bank and chain wait in executing.
  approved: ['awaiting_approval', 'executing', 'executed', 'blocked', 'cancelled', 'failed'],
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

/** The statuses whose payments count against a `max_per_day` rule: on their way out or gone. */
export const COUNTED_IN_DAY: readonly PayoutStatus[] = ['approved', 'executing', 'executed'];

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

/**
 * A person may still cancel it: the table allows cancelled and nothing has left the account yet
 * (an executing chain payment with a reported transaction is the chain's to end).
 */
export function isCancellable(status: PayoutStatus, txHash: string | null): boolean {
  return canMove(status, 'cancelled') && !(status === 'executing' && txHash !== null);
}

/** Waiting in executing for its rail: the bank's confirmation, or a chain transfer to be sent. */
export function waitsForRail(status: PayoutStatus): boolean {
  return status === 'executing';
}

/** Held by screening: blocked for an owner to release or reject. */
export function isHeld(payment: { status: PayoutStatus; blocked_reason: string | null }): boolean {
  return payment.status === 'blocked' && payment.blocked_reason === 'screening_hold';
}

/** What a person can do to a payment, from its page or the app API. */
export const PAYOUT_ACTIONS = [
  'approve',
  'reject',
  'release',
  'cancel',
  'markExecuted',
  'downloadFile',
  'send',
] as const;
export type PayoutAction = (typeof PAYOUT_ACTIONS)[number];

/** What the action rules read of a payment. */
export type ActionSubject = {
  status: PayoutStatus;
  rail: Rail;
  blocked_reason: string | null;
  maker_id: string;
  tx_hash: string | null;
  /** The people who approved it so far. */
  approvedBy: readonly string[];
};

export type Actor = { userId: string; role: Role };

export type ActionRefusal =
  | { code: 'forbidden' | 'maker_cannot_approve' | 'already_approved'; detail: string }
  | { code: 'invalid_request'; detail: string; field: 'rail' }
  | { code: 'payment_state'; detail: string; details: Record<string, unknown> };

const VERBS: Record<PayoutAction, string> = {
  approve: 'approve',
  reject: 'reject',
  release: 'release',
  cancel: 'cancel',
  markExecuted: 'execute',
  downloadFile: 'export',
  send: 'send',
};

function notAdmin(action: PayoutAction, role: Role): ActionRefusal {
  return {
    code: 'forbidden',
    detail: `Only an owner or an admin can ${VERBS[action]} a payment; you are ${role}.`,
  };
}

function wrongState(payment: ActionSubject, done: string): ActionRefusal {
  return {
    code: 'payment_state',
    detail: `A payment that is ${payment.status} cannot be ${done}.`,
    details: { status: payment.status },
  };
}

function wrongRail(rail: Rail, detail: string, payment: ActionSubject): ActionRefusal | undefined {
  return payment.rail === rail ? undefined : { code: 'invalid_request', detail, field: 'rail' };
}

/** Approving counts while the payment awaits approval, once per person, never by its maker. */
function approveRefusal(payment: ActionSubject, actor: Actor): ActionRefusal | undefined {
  if (!canAdminister(actor.role)) return notAdmin('approve', actor.role);
  if (payment.maker_id === actor.userId) {
    return { code: 'maker_cannot_approve', detail: 'The person who made a payment cannot approve it.' };
  }
  if (payment.status !== 'awaiting_approval') return wrongState(payment, 'approved');
  if (payment.approvedBy.includes(actor.userId)) {
    return { code: 'already_approved', detail: 'You have already approved this payment.' };
  }
  return undefined;
}

function rejectRefusal(payment: ActionSubject, actor: Actor): ActionRefusal | undefined {
  if (!canAdminister(actor.role)) return notAdmin('reject', actor.role);
  if (isHeld(payment) && actor.role !== 'owner') {
    return { code: 'forbidden', detail: 'Only an owner can reject a payment held by screening.' };
  }
  if (!canMove(payment.status, 'rejected')) return wrongState(payment, 'rejected');
  return undefined;
}

function releaseRefusal(payment: ActionSubject, actor: Actor): ActionRefusal | undefined {
  if (actor.role !== 'owner')
    return { code: 'forbidden', detail: 'Only an owner can release a screening hold.' };
  if (!isHeld(payment)) {
    return {
      code: 'payment_state',
      detail: 'Only a payment held by screening can be released.',
      details: { status: payment.status, blocked_reason: payment.blocked_reason },
    };
  }
  return undefined;
}

/** Its maker or an administrator, while they may write in the book, until nothing can be undone. */
function cancelRefusal(payment: ActionSubject, actor: Actor): ActionRefusal | undefined {
  const own = payment.maker_id === actor.userId && canWrite(actor.role);
  if (!own && !canAdminister(actor.role)) return notAdmin('cancel', actor.role);
  if (!isCancellable(payment.status, payment.tx_hash)) return wrongState(payment, 'cancelled');
  return undefined;
}

function railRefusal(action: PayoutAction, payment: ActionSubject, actor: Actor): ActionRefusal | undefined {
  if (action === 'markExecuted') {
    if (!canAdminister(actor.role)) return notAdmin(action, actor.role);
    const rail = wrongRail('bank', 'Only a bank payment is marked executed by hand.', payment);
    if (rail) return rail;
    return waitsForRail(payment.status) ? undefined : wrongState(payment, 'executed');
  }
  if (action === 'downloadFile') {
    if (!canAdminister(actor.role)) return notAdmin(action, actor.role);
    const rail = wrongRail('bank', 'Only a bank payment has a payment file.', payment);
    if (rail) return rail;
    const handedOver = waitsForRail(payment.status) || payment.status === 'executed';
    return handedOver ? undefined : wrongState(payment, 'exported');
  }
  // send: the chain transfer of an executing chain payment nobody has sent yet.
  if (!canWrite(actor.role)) return { code: 'forbidden', detail: `A ${actor.role} cannot send a payment.` };
  const rail = wrongRail('chain', 'Only a chain payment is sent from a wallet.', payment);
  if (rail) return rail;
  if (!waitsForRail(payment.status) || payment.tx_hash !== null) return wrongState(payment, 'sent');
  return undefined;
}

/**
 * Why `actor` may not take `action` on `payment` now, or undefined when they may: the one rule
 * the services refuse by and the page's buttons are computed from.
 */
export function actionRefusal(
  action: PayoutAction,
  payment: ActionSubject,
  actor: Actor,
): ActionRefusal | undefined {
  if (action === 'approve') return approveRefusal(payment, actor);
  if (action === 'reject') return rejectRefusal(payment, actor);
  if (action === 'release') return releaseRefusal(payment, actor);
  if (action === 'cancel') return cancelRefusal(payment, actor);
  return railRefusal(action, payment, actor);
}

/** Each action this viewer may take on this payment now: what its page offers. */
export function allowedActions(payment: ActionSubject, actor: Actor): Record<PayoutAction, boolean> {
  const may = (action: PayoutAction) => actionRefusal(action, payment, actor) === undefined;
  return {
    approve: may('approve'),
    reject: may('reject'),
    release: may('release'),
    cancel: may('cancel'),
    markExecuted: may('markExecuted'),
    downloadFile: may('downloadFile'),
    send: may('send'),
  };
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
