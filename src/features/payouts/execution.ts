import { defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { utcDayOf } from '../../core/day.ts';
import { AppError } from '../../core/errors.ts';
import type { AmountE8 } from '../../core/money.ts';
import type { Queryable } from '../../platform/db/database.ts';
import type { PayoutStatus } from '../../platform/db/schema.ts';
import {
  moneyOut,
  paymentAwaitingApproval,
  paymentBlocked,
  payoutExecuted,
} from '../../platform/outbox/events.ts';
import { enqueueEvents } from '../../platform/outbox/outbox.ts';
import type { AccountRow } from '../accounts/index.ts';
import {
  decrease,
  increase,
  type LedgerAccountRef,
  ledgerAccounts,
  postEntry,
  readAmount,
} from '../ledger/index.ts';
import { normalizeDestination, recordHold, screen } from '../screening/index.ts';
import {
  type BlockReason,
  COUNTED_IN_DAY,
  canMove,
  matchApprovalRule,
  type PolicyRule,
  policyBreach,
} from './domain.ts';
import * as store from './store.ts';

// The road every payment out travels once it exists: screening, policy rules, approval rules,
// and execution on its rail. Each step runs inside the caller's transaction, on the payment's
// row lock (or on a row nobody else can see yet), and writes its events in the same transaction.

export type ExecutionDeps = { clock: Clock };

type Ctx = { tx: Queryable; deps: ExecutionDeps; account: AccountRow };

function amountOf(row: store.PayoutRow): AmountE8 {
  return readAmount(row.amount);
}

/** The ledger's view of an account's money; kept off overdraft unless the account is a card. */
export function payingSide(account: AccountRow, asset: LedgerAccountRef): LedgerAccountRef {
  return account.kind === 'card' ? asset : { ...asset, noOverdraft: true };
}

/** What every payment event says of its payment: where, when, which, how much. */
function paymentOf(row: store.PayoutRow, at: Date) {
  return {
    scope: { spaceId: row.space_id, at },
    payment: { payment_id: row.id, amount: amountOf(row), currency: row.currency },
  };
}

/**
 * The one way a payment's status changes: the transition table (domain.ts's canMove) allows the
 * step, or it is refused with payment_state and nothing is written. Staying in a status (a block
 * for another reason) is no step.
 */
export async function move(
  ctx: { tx: Queryable; deps: ExecutionDeps },
  row: store.PayoutRow,
  changes: Partial<store.PayoutRow> & { status: PayoutStatus },
) {
  if (changes.status !== row.status && !canMove(row.status, changes.status)) {
    throw new AppError('payment_state', `A payment that is ${row.status} cannot become ${changes.status}.`, {
      status: row.status,
    });
  }
  const at = ctx.deps.clock.now();
  Object.assign(row, changes, { updated_at: at });
  await store.updatePayout(ctx.tx, row.space_id, row.id, { ...changes, updated_at: at });
}

export async function block(ctx: Ctx, row: store.PayoutRow, reason: BlockReason) {
  await move(ctx, row, { status: 'blocked', blocked_reason: reason });
  const { scope, payment } = paymentOf(row, row.updated_at);
  await enqueueEvents(ctx.tx, [paymentBlocked(scope, { ...payment, reason })]);
}

async function policyRules(tx: Queryable, spaceId: string): Promise<PolicyRule[]> {
  const rows = await store.activePolicyRules(tx, spaceId);
  return rows.map((rule): PolicyRule => {
    if (rule.kind === 'max_per_payment' || rule.kind === 'max_per_day') {
      return {
        kind: rule.kind,
        amount: readAmount(defined(rule.amount, "an amount rule's amount")),
        currency: defined(rule.currency, "an amount rule's currency"),
      };
    }
    if (rule.kind === 'blocked_destination')
      return { kind: rule.kind, destination: defined(rule.destination, 'a blocked destination') };
    return { kind: 'allowed_currencies', currencies: rule.currencies ?? [] };
  });
}

/** The first policy rule the payment breaks now; with `lock`, the day's total is read under the rules' locks. */
export async function checkPolicy(ctx: Ctx, row: store.PayoutRow, lock: boolean) {
  if (lock) await store.lockDayRules(ctx.tx, row.space_id);
  const rules = await policyRules(ctx.tx, row.space_id);
  // max_per_day counts the UTC day of now.
  const { start, end } = utcDayOf(ctx.deps.clock.now());
  const counts = rules.some((rule) => rule.kind === 'max_per_day');
  const leftToday = counts
    ? readAmount(
        await store.leftInDay(ctx.tx, {
          spaceId: row.space_id,
          currency: row.currency,
          start,
          end,
          exceptId: row.id,
          counted: COUNTED_IN_DAY,
        }),
      )
    : readAmount('0');
  const destinations = [row.destination, row.payee].filter((d) => d !== '');
  return policyBreach(
    rules,
    { amount: amountOf(row), currency: row.currency, destinations, leftToday },
    normalizeDestination,
  );
}

/** Sends a payment on its way: screening (unless an owner released it), policy, approval rules. */
export async function route(ctx: Ctx, row: store.PayoutRow, released: boolean): Promise<boolean> {
  if (!released) {
    // A chain payment's address, a bank payment's IBAN or account number, and every name on it.
    const names = [row.payee, String(row.requisites?.holder ?? '')].filter((name) => name !== '');
    const address = row.rail === 'book' ? null : row.destination;
    const hit = await screen(ctx.tx, { address, names });
    if (hit) {
      await recordHold(ctx.tx, { spaceId: row.space_id, payoutId: row.id, hit, at: ctx.deps.clock.now() });
      await block(ctx, row, 'screening_hold');
      return true;
    }
  }
  const breach = await checkPolicy(ctx, row, false);
  if (breach) {
    await block(ctx, row, breach);
    return true;
  }
  const rules = (await store.activeApprovalRules(ctx.tx, row.space_id)).map((rule) => ({
    id: rule.id,
    minAmount: readAmount(rule.min_amount),
    currency: rule.currency,
    requiredApprovals: rule.required_approvals,
  }));
  const rule = matchApprovalRule(rules, amountOf(row), row.currency);
  if (rule) {
    await move(ctx, row, {
      status: 'awaiting_approval',
      blocked_reason: null,
      approval_rule_id: rule.id,
      required_approvals: rule.requiredApprovals,
    });
    const { scope, payment } = paymentOf(row, row.updated_at);
    await enqueueEvents(ctx.tx, [
      paymentAwaitingApproval(scope, { ...payment, required_approvals: rule.requiredApprovals }),
    ]);
    return true;
  }
  return startExecution(ctx, row);
}

/**
 * An approved payment: policy again (the day's total under the rules' locks), then the rail.
 * `book` executes at once; `bank` and `chain` wait for the rail in `executing`. False when the
 * account cannot carry a book payment (the caller decides whether that refuses or fails it).
 */
export async function startExecution(ctx: Ctx, row: store.PayoutRow): Promise<boolean> {
  const breach = await checkPolicy(ctx, row, true);
  if (breach) {
    await block(ctx, row, breach);
    return true;
  }
  await move(ctx, row, { status: 'approved', blocked_reason: null, approved_at: ctx.deps.clock.now() });
  if (row.rail === 'book') return execute(ctx, row, {});
  await move(ctx, row, { status: 'executing' });
  return true;
}

/** The rail confirmed: one ledger entry, money.out and payout.executed, in this transaction. */
export async function execute(
  ctx: Ctx,
  row: store.PayoutRow,
  proof: { reference?: string; txHash?: string },
): Promise<boolean> {
  const at = ctx.deps.clock.now();
  const where = { spaceId: row.space_id, currency: row.currency, at };
  const asset = await ledgerAccounts.asset(ctx.tx, { ...where, accountId: ctx.account.id });
  const expense = await ledgerAccounts.expense(ctx.tx, { ...where, ref: 'payouts' });
  const origin = row.rail === 'book' ? 'manual' : 'rail';
  const posted = await postEntry(
    ctx.tx,
    {
      spaceId: row.space_id,
      origin,
      kind: 'expense',
      occurredOn: row.occurred_on,
      causeType: 'payout',
      causeId: row.id,
      counterparty: row.payee,
      memo: row.note,
      postings: [decrease(payingSide(ctx.account, asset), amountOf(row)), increase(expense, amountOf(row))],
    },
    at,
  );
  if (!posted.ok) return false;
  await move(ctx, row, {
    status: 'executed',
    transaction_id: posted.entryId,
    executed_at: at,
    ...(proof.reference === undefined ? {} : { reference: proof.reference }),
    ...(proof.txHash === undefined ? {} : { tx_hash: proof.txHash }),
  });
  const rail = row.rail === 'chain' ? (ctx.account.network ?? 'chain') : row.rail;
  const { scope, payment } = paymentOf(row, at);
  await enqueueEvents(ctx.tx, [
    moneyOut(scope, {
      transaction_id: posted.entryId,
      account_id: ctx.account.id,
      amount: payment.amount,
      currency: row.currency,
      kind: 'expense',
      origin,
      occurred_on: row.occurred_on,
    }),
    payoutExecuted(scope, { ...payment, rail, transaction_id: posted.entryId }),
  ]);
  return true;
}

/** A book payment the account could not carry at approval: it fails, nothing is booked. */
export async function fail(ctx: Ctx, row: store.PayoutRow, reason: string) {
  await move(ctx, row, { status: 'failed', blocked_reason: reason });
}
