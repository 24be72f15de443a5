import { randomUUID } from 'node:crypto';
import { getAddress, isAddress } from 'viem';
import { assert } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { utcDateOf } from '../../core/day.ts';
import { AppError } from '../../core/errors.ts';
import { type AmountE8, formatAmount } from '../../core/money.ts';
import { type Role, WRITER_ROLES } from '../../core/roles.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import type { PayoutStatus } from '../../platform/db/schema.ts';
import { type AccountRow, requireAccount } from '../accounts/index.ts';
import { findContactPayee, type Requisites } from '../contacts/index.ts';
import { naturalBalanceOf } from '../ledger/index.ts';
import { screeningStatus } from '../screening/index.ts';
import { closedThrough, inClosedPeriod, requireRole } from '../spaces/index.ts';
import { paymentFile } from './bank-file.ts';
import { type ActionSubject, actionRefusal, type PayoutAction, type Rail } from './domain.ts';
import { execute, fail, move, route, startExecution } from './execution.ts';
import * as store from './store.ts';

// Payments out, as people drive them from the app: create, approve, reject, release a hold,
// cancel, and mark a bank payment executed. Every change runs on the payment's row lock.

export type PayoutsDeps = { db: Db; clock: Clock };

export type PayoutInput = {
  account_id: string;
  amount: AmountE8;
  currency?: string | undefined;
  payee: string;
  rail: Rail;
  destination?: string | undefined;
  contact_id?: string | undefined;
  note?: string | undefined;
  occurred_on?: string | undefined;
};

const PAGE_MAX = 100;

function refuse(field: string, detail: string): never {
  throw new AppError('invalid_request', detail, { field });
}

export function presentPayout(row: store.PayoutRow, approvals: { user_id: string; created_at: Date }[]) {
  return {
    id: row.id,
    status: row.status,
    account_id: row.account_id,
    amount: formatAmount(store.amountOf(row)),
    currency: row.currency,
    rail: row.rail,
    payee: row.payee,
    destination: row.destination,
    contact_id: row.contact_id,
    note: row.note,
    occurred_on: row.occurred_on,
    maker_id: row.maker_id,
    approvals: approvals.length,
    approved_by: approvals.map((approval) => approval.user_id),
    required_approvals: row.required_approvals,
    blocked_reason: row.blocked_reason,
    release_reason: row.release_reason,
    reject_reason: row.reject_reason,
    reference: row.reference,
    transaction_id: row.transaction_id,
    tx_hash: row.tx_hash,
    created_at: row.created_at.toISOString(),
    approved_at: row.approved_at?.toISOString() ?? null,
    executed_at: row.executed_at?.toISOString() ?? null,
  };
}

async function present(db: Queryable, row: store.PayoutRow) {
  return presentPayout(row, await store.approvalsOf(db, row.space_id, [row.id]));
}

type Destination = { destination: string; requisites: Requisites | null; payee: string };

/** Where the money goes, per rail: a chain address on the account's network, or the contact's requisites. */
async function destinationOf(
  tx: Queryable,
  spaceId: string,
  account: AccountRow,
  input: PayoutInput,
): Promise<Destination> {
  if (input.rail === 'chain') {
    if (account.kind !== 'crypto' || account.network === null) {
      refuse('rail', 'A chain payment leaves a crypto account with a network.');
    }
    if (input.destination === undefined || !isAddress(input.destination, { strict: false })) {
      refuse('destination', 'destination must be a 0x address on the account’s network.');
    }
    return { destination: getAddress(input.destination).toLowerCase(), requisites: null, payee: input.payee };
  }
  if (input.rail === 'bank') {
    if (input.contact_id === undefined) refuse('contact_id', 'A bank payment names the contact it pays.');
    const payee = await findContactPayee(tx, spaceId, input.contact_id);
    if (!payee) refuse('contact_id', 'No contact with this id in this space.');
    if (!payee.requisites) refuse('contact_id', 'The contact has no bank requisites to pay to.');
    const requisites = payee.requisites;
    const destination = requisites.scheme === 'sepa' ? requisites.iban : requisites.account_number;
    return { destination, requisites, payee: input.payee };
  }
  return { destination: input.destination ?? '', requisites: null, payee: input.payee };
}

async function checkCreatable(
  tx: Queryable,
  spaceId: string,
  account: AccountRow,
  input: PayoutInput,
  today: string,
) {
  const currency = (input.currency ?? account.currency).toUpperCase();
  if (currency !== account.currency.toUpperCase()) {
    throw new AppError(
      'currency_mismatch',
      `The account holds ${account.currency}; pay in ${account.currency}.`,
      {
        field: 'currency',
      },
    );
  }
  const occurredOn = input.occurred_on ?? today;
  const closed = await closedThrough(tx, spaceId);
  if (inClosedPeriod(occurredOn, closed)) {
    throw new AppError('period_closed', `The books are closed through ${closed}; date the payment later.`, {
      field: 'occurred_on',
      closed_through: closed,
    });
  }
  if (input.contact_id !== undefined && input.rail !== 'bank') {
    if (!(await findContactPayee(tx, spaceId, input.contact_id))) {
      refuse('contact_id', 'No contact with this id in this space.');
    }
  }
  await refuseOverdraft(tx, account, input.amount);
  return { currency: account.currency, occurredOn };
}

/** An early, friendly refusal; the binding check is the guarded posting under the row lock. */
async function refuseOverdraft(tx: Queryable, account: AccountRow, amount: AmountE8) {
  if (account.kind === 'card' || account.ledger_account_id === null) {
    if (account.kind !== 'card') throw insufficient(account, '0');
    return;
  }
  const balance = await naturalBalanceOf(tx, account.ledger_account_id);
  if (balance < amount) throw insufficient(account, formatAmount(balance));
}

function insufficient(account: AccountRow, balance: string) {
  return new AppError('insufficient_balance', 'The account does not hold enough for this payment.', {
    account_id: account.id,
    balance,
  });
}

export async function createPayout(deps: PayoutsDeps, userId: string, spaceId: string, input: PayoutInput) {
  await requireRole(deps.db, spaceId, userId, WRITER_ROLES);
  return deps.db.transaction().execute((tx) => createPayoutIn(tx, deps, userId, spaceId, input));
}

/**
 * A payment out made inside the caller's transaction, by a maker whose standing the caller has
 * checked (an agent's write: its issuer, or the person approving its proposal). Same road as
 * every payment: screening, policy rules, approval rules.
 */
export async function createPayoutIn(
  tx: Queryable,
  deps: PayoutsDeps,
  userId: string,
  spaceId: string,
  input: PayoutInput,
) {
  const account = await requireAccount(tx, spaceId, input.account_id);
  const at = deps.clock.now();
  const { currency, occurredOn } = await checkCreatable(tx, spaceId, account, input, utcDateOf(at));
  const where = await destinationOf(tx, spaceId, account, input);
  const row: store.PayoutRow = {
    id: randomUUID(),
    space_id: spaceId,
    account_id: account.id,
    maker_id: userId,
    amount: formatAmount(input.amount),
    currency,
    rail: input.rail,
    payee: where.payee,
    destination: where.destination,
    requisites: where.requisites as Record<string, unknown> | null,
    contact_id: input.contact_id ?? null,
    note: input.note ?? '',
    occurred_on: occurredOn,
    status: 'approved',
    approval_rule_id: null,
    required_approvals: 0,
    blocked_reason: null,
    release_reason: null,
    released_by: null,
    reject_reason: null,
    rejected_by: null,
    reference: null,
    transaction_id: null,
    tx_hash: null,
    created_at: at,
    approved_at: null,
    executed_at: null,
    updated_at: at,
  };
  await store.insertPayout(tx, row);
  // A payment that needs nobody's approval executes now; if the account cannot carry it,
  // nothing is written and the maker hears why.
  if (!(await route({ tx, deps, account }, row, false))) throw insufficient(account, '');
  return present(tx, row);
}

/** The sanctions list's state as a member of the space reads it (another book answers 404). */
export async function screeningFor(deps: PayoutsDeps, userId: string, spaceId: string) {
  await requireRole(deps.db, spaceId, userId);
  return screeningStatus(deps.db);
}

export async function getPayout(deps: PayoutsDeps, userId: string, spaceId: string, payoutId: string) {
  await requireRole(deps.db, spaceId, userId);
  const row = await store.findPayout(deps.db, spaceId, payoutId);
  if (!row) throw new AppError('not_found', 'No payment with this id in this space.');
  return present(deps.db, row);
}

export async function listPayouts(
  deps: PayoutsDeps,
  userId: string,
  spaceId: string,
  page: {
    status?: PayoutStatus | undefined;
    starting_after?: string | undefined;
    limit?: number | undefined;
  },
) {
  await requireRole(deps.db, spaceId, userId);
  const limit = page.limit ?? 50;
  if (limit < 1 || limit > PAGE_MAX) refuse('limit', `limit must be from 1 to ${PAGE_MAX}.`);
  let after: { createdAt: Date; id: string } | undefined;
  if (page.starting_after !== undefined) {
    const cursor = await store.findPayout(deps.db, spaceId, page.starting_after);
    if (!cursor) refuse('starting_after', 'starting_after names no payment of this space.');
    after = { createdAt: cursor.created_at, id: cursor.id };
  }
  const rows = await store.listPayouts(deps.db, { spaceId, status: page.status, after, limit: limit + 1 });
  const shown = rows.slice(0, limit);
  const approvals = await store.approvalsOf(
    deps.db,
    spaceId,
    shown.map((row) => row.id),
  );
  return {
    items: shown.map((row) =>
      presentPayout(
        row,
        approvals.filter((approval) => approval.payout_id === row.id),
      ),
    ),
    has_more: rows.length > limit,
  };
}

type Locked = { tx: Queryable; row: store.PayoutRow; account: AccountRow; role: Role | null };

/**
 * Runs `work` on the payment's row lock, after checking the caller is a member. A null userId
 * is the chain worker, acting for nobody (it only confirms or undoes what the rail did); its
 * role is null.
 */
export async function onLockedPayout<T>(
  deps: PayoutsDeps,
  ids: { userId: string | null; spaceId: string; payoutId: string },
  work: (locked: Locked) => Promise<T>,
): Promise<T> {
  return deps.db.transaction().execute(async (tx) => {
    const role = ids.userId === null ? null : await requireRole(tx, ids.spaceId, ids.userId);
    const row = await store.lockPayout(tx, ids.spaceId, ids.payoutId);
    if (!row) throw new AppError('not_found', 'No payment with this id in this space.');
    const account = await requireAccount(tx, ids.spaceId, row.account_id);
    return work({ tx, row, account, role });
  });
}

/** What the domain's action rules read of a payment. */
export function actionSubject(row: store.PayoutRow, approvedBy: readonly string[]): ActionSubject {
  return {
    status: row.status,
    rail: row.rail,
    blocked_reason: row.blocked_reason,
    maker_id: row.maker_id,
    tx_hash: row.tx_hash,
    approvedBy,
  };
}

/** Refuses the action unless the domain's rule (who may do what, in which status) allows it. */
function requireAllowed(
  action: PayoutAction,
  row: store.PayoutRow,
  who: { userId: string; role: Role | null },
  approvedBy: readonly string[] = [],
) {
  assert(who.role !== null, 'A person acts on a payment with their role in its book');
  const refusal = actionRefusal(action, actionSubject(row, approvedBy), {
    userId: who.userId,
    role: who.role,
  });
  if (refusal === undefined) return;
  if (refusal.code === 'invalid_request') refuse(refusal.field, refusal.detail);
  if (refusal.code === 'payment_state') throw new AppError('payment_state', refusal.detail, refusal.details);
  throw new AppError(refusal.code, refusal.detail);
}

export function approvePayout(deps: PayoutsDeps, userId: string, spaceId: string, payoutId: string) {
  return onLockedPayout(deps, { userId, spaceId, payoutId }, async ({ tx, row, account, role }) => {
    const before = await store.approvalsOf(tx, spaceId, [row.id]);
    requireAllowed(
      'approve',
      row,
      { userId, role },
      before.map((approval) => approval.user_id),
    );
    const at = deps.clock.now();
    if (
      !(await store.addApproval(tx, {
        space_id: spaceId,
        payout_id: row.id,
        user_id: userId,
        created_at: at,
      }))
    ) {
      throw new AppError('already_approved', 'You have already approved this payment.');
    }
    const approvals = await store.approvalsOf(tx, spaceId, [row.id]);
    if (approvals.length >= row.required_approvals) {
      const ctx = { tx, deps, account };
      if (!(await startExecution(ctx, row))) await fail(ctx, row, 'insufficient_balance');
    }
    return present(tx, row);
  });
}

export function rejectPayout(
  deps: PayoutsDeps,
  userId: string,
  spaceId: string,
  payoutId: string,
  reason: string,
) {
  return onLockedPayout(deps, { userId, spaceId, payoutId }, async ({ tx, row, role }) => {
    requireAllowed('reject', row, { userId, role });
    await move({ tx, deps }, row, { status: 'rejected', reject_reason: reason, rejected_by: userId });
    return present(tx, row);
  });
}

/** An owner releases a screening hold with a recorded reason; the payment goes on its way. */
export function releasePayout(
  deps: PayoutsDeps,
  userId: string,
  spaceId: string,
  payoutId: string,
  reason: string,
) {
  return onLockedPayout(deps, { userId, spaceId, payoutId }, async ({ tx, row, account, role }) => {
    requireAllowed('release', row, { userId, role });
    Object.assign(row, { release_reason: reason, released_by: userId });
    await store.updatePayout(tx, spaceId, row.id, { release_reason: reason, released_by: userId });
    const ctx = { tx, deps, account };
    if (!(await route(ctx, row, true))) await fail(ctx, row, 'insufficient_balance');
    return present(tx, row);
  });
}

export function cancelPayout(deps: PayoutsDeps, userId: string, spaceId: string, payoutId: string) {
  return onLockedPayout(deps, { userId, spaceId, payoutId }, async ({ tx, row, role }) => {
    requireAllowed('cancel', row, { userId, role });
    await move({ tx, deps }, row, { status: 'cancelled' });
    return present(tx, row);
  });
}

/** A bank payment the bank carried out: executed with the bank's reference. */
export function markBankExecuted(
  deps: PayoutsDeps,
  userId: string,
  spaceId: string,
  payoutId: string,
  reference: string,
) {
  return onLockedPayout(deps, { userId, spaceId, payoutId }, async ({ tx, row, account, role }) => {
    requireAllowed('markExecuted', row, { userId, role });
    if (!(await execute({ tx, deps, account }, row, { reference }))) {
      throw insufficient(account, '');
    }
    return present(tx, row);
  });
}

/** The file a person hands to the bank for an approved bank payment. */
export async function bankFile(deps: PayoutsDeps, userId: string, spaceId: string, payoutId: string) {
  const role = await requireRole(deps.db, spaceId, userId);
  const row = await store.findPayout(deps.db, spaceId, payoutId);
  if (!row) throw new AppError('not_found', 'No payment with this id in this space.');
  requireAllowed('downloadFile', row, { userId, role });
  const account = await requireAccount(deps.db, spaceId, row.account_id);
  return paymentFile(row, store.amountOf(row), account, deps.clock.now());
}
