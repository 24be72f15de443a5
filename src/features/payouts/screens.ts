import { AppError } from '../../core/errors.ts';
import { formatAmount } from '../../core/money.ts';
import { listSpaceAccounts, requireAccount } from '../accounts/index.ts';
import { listContactsInApp } from '../contacts/index.ts';
import { holdMatches, inboundFlags } from '../screening/index.ts';
import { requireRole } from '../spaces/index.ts';
import { getUser } from '../users/index.ts';
import { type ChainRailDeps, chainTransaction } from './chain-rail.ts';
import { type Actor, allowedActions, waitsForRail } from './domain.ts';
import { actionSubject, type PayoutsDeps, presentPayout, screeningFor } from './service.ts';
import * as store from './store.ts';

// What the web app's money-out screens read beyond the app API's answers: a payment with the
// names of who acted, its status history, the rule it met and its unsigned transfer; the
// choices of the create form; the payments screening holds. Reads only; every write the
// screens make is the app API's own service call.

const HELD_SHOWN_MAX = 100;

/** The names of the people who acted on a payment (they may have left the book since). */
async function namesOf(deps: PayoutsDeps, ids: (string | null)[]) {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  const users = await Promise.all(wanted.map((id) => getUser(deps, id)));
  const names = new Map(users.map((user) => [user.id, user.name || user.email]));
  return (id: string | null) => (id === null ? null : (names.get(id) ?? 'someone'));
}

/** The unsigned transfer of an executing chain payment nobody has sent yet, or why there is none. */
async function transferToSign(deps: ChainRailDeps, userId: string, row: store.PayoutRow) {
  if (row.rail !== 'chain' || !waitsForRail(row.status) || row.tx_hash !== null) return null;
  try {
    return { ok: true as const, value: await chainTransaction(deps, userId, row.space_id, row.id) };
  } catch (error) {
    if (error instanceof AppError) return { ok: false as const, detail: error.message };
    throw error;
  }
}

/**
 * What this viewer may do to this payment now: the domain's rule, the one the services refuse
 * by, so the page shows only the buttons that would succeed.
 */
function actionsFor(row: store.PayoutRow, actor: Actor, approvedBy: readonly string[]) {
  return allowedActions(actionSubject(row, approvedBy), actor);
}

export type PayoutActions = ReturnType<typeof actionsFor>;

export async function payoutDetail(deps: ChainRailDeps, userId: string, spaceId: string, payoutId: string) {
  const role = await requireRole(deps.db, spaceId, userId);
  const row = await store.findPayout(deps.db, spaceId, payoutId);
  if (!row) throw new AppError('not_found', 'No payment with this id in this space.');
  const [approvals, history, account, matches] = await Promise.all([
    store.approvalsOf(deps.db, spaceId, [row.id]),
    store.statusChangesOf(deps.db, spaceId, row.id),
    requireAccount(deps.db, spaceId, row.account_id),
    holdMatches(deps.db, spaceId, [row.id]),
  ]);
  const nameOf = await namesOf(deps, [
    row.maker_id,
    row.rejected_by,
    row.released_by,
    ...approvals.map((approval) => approval.user_id),
  ]);
  const rule = row.approval_rule_id
    ? await store.findApprovalRule(deps.db, spaceId, row.approval_rule_id)
    : null;
  return {
    payment: presentPayout(row, approvals),
    account: { id: account.id, name: account.name, network: account.network },
    maker: nameOf(row.maker_id),
    approvals: approvals.map((approval) => ({
      user_id: approval.user_id,
      name: nameOf(approval.user_id),
      at: approval.created_at.toISOString(),
    })),
    rejected_by: nameOf(row.rejected_by),
    released_by: nameOf(row.released_by),
    history: history.map((change) => ({
      status: change.to_status,
      reason: change.reason,
      at: new Date(change.changed_at).toISOString(),
    })),
    rule: rule
      ? {
          min_amount: formatAmount(store.amountOf({ amount: rule.min_amount })),
          currency: rule.currency,
          required_approvals: rule.required_approvals,
        }
      : null,
    /** The list entry that held it (kept after a release), or null when screening never held it. */
    screening: matches[0] ?? null,
    transfer: await transferToSign(deps, userId, row),
    actions: actionsFor(
      row,
      { userId, role },
      approvals.map((approval) => approval.user_id),
    ),
  };
}

export type PayoutDetail = Awaited<ReturnType<typeof payoutDetail>>;
export type { InboundFlag } from '../screening/index.ts';

/** The create form's choices: the book's accounts, and the contacts a bank payment may pay. */
export async function payoutChoices(deps: PayoutsDeps, userId: string, spaceId: string) {
  await requireRole(deps.db, spaceId, userId);
  const accounts = await listSpaceAccounts(deps.db, spaceId);
  const contacts = await listContactsInApp(deps, userId, spaceId, {});
  return {
    accounts: accounts.map((account) => ({
      id: account.id,
      name: account.name,
      currency: account.currency,
      kind: account.kind,
      network: account.network,
    })),
    contacts: contacts.items.map((contact) => ({ id: contact.id, name: contact.name })),
  };
}

export type PayoutChoices = Awaited<ReturnType<typeof payoutChoices>>;

/**
 * The payments screening holds in this book, newest first, with their account names; and the
 * transfers in from listed senders, booked and flagged.
 */
export async function heldPayouts(deps: PayoutsDeps, userId: string, spaceId: string) {
  const status = await screeningFor(deps, userId, spaceId);
  const rows = await store.heldPayouts(deps.db, spaceId, HELD_SHOWN_MAX);
  const approvals = await store.approvalsOf(
    deps.db,
    spaceId,
    rows.map((row) => row.id),
  );
  return {
    status,
    inbound: await inboundFlags(deps.db, spaceId),
    held: rows.map((row) =>
      presentPayout(
        row,
        approvals.filter((approval) => approval.payout_id === row.id),
      ),
    ),
  };
}
