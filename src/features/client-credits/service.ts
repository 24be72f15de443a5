import { randomUUID } from 'node:crypto';
import { defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { decodeCursor, PAGE_SIZE, pageOf } from '../../core/cursor.ts';
import { utcDateOf } from '../../core/day.ts';
import { AppError } from '../../core/errors.ts';
import {
  type AmountE8,
  asAmount,
  formatAmount,
  formatMoneyForPeople,
  parseAmountInput,
} from '../../core/money.ts';
import { randomSecret } from '../../platform/crypto.ts';
import type { Db, Queryable, Tx } from '../../platform/db/database.ts';
import { CommittedRows } from '../../platform/db/lasting.ts';
import { contactExists } from '../contacts/index.ts';
import {
  decrease,
  ensureLedgerAccounts,
  increase,
  type LedgerAccountRef,
  ledgerAccountSpecs,
  ledgerAccounts,
  naturalBalance,
  naturalBalanceOf,
  postEntry,
  readAmount,
} from '../ledger/index.ts';
import { requireAdministrator, requireRole } from '../spaces/index.ts';
import { adjustmentKind, GRANT_EXPENSE } from './domain.ts';
import * as store from './store.ts';

// A client's prepaid credit: money the seller holds for one client_ref, in USD, never below
// zero. It is listed under its client_ref until the seller names a contact for it.

export const CREDIT_CURRENCY = 'USD';

/** What a charge needs of a client credit: fields that never change once the row is written. */
export type OpenCredit = Pick<
  store.ClientCreditRow,
  'id' | 'space_id' | 'client_ref' | 'currency' | 'ledger_account_id' | 'page_token'
> & { ledgerAccount: LedgerAccountRef };

// Kept by (space, client_ref, currency), a unique key, once read from a committed row (see
// platform/db/lasting.ts): the charge path then reads nothing to find its client.
const lastingCredits = new CommittedRows<OpenCredit>();

/**
 * Serializes the writes that must see each other for one client credit (the refusal that reuses
 * or mints its top-up request): a second one waits here, then reads what the first committed.
 */
export function lockClientCredit(tx: Tx, credit: OpenCredit): Promise<void> {
  return store.lock(tx, credit.space_id, credit.id);
}

export async function openClientCredit(
  tx: Queryable,
  spaceId: string,
  clientRef: string,
  at: Date,
): Promise<OpenCredit> {
  const key = `${spaceId}|${CREDIT_CURRENCY}|${clientRef}`;
  const known = lastingCredits.get(key);
  if (known) return known;
  const ledgerAccount = await ledgerAccounts.clientCredit(tx, {
    spaceId,
    currency: CREDIT_CURRENCY,
    at,
    clientRef,
  });
  const existing = await store.findLastingByRef(tx, spaceId, clientRef, CREDIT_CURRENCY);
  if (existing) {
    const { lasting, ...fields } = existing;
    const credit = { ...fields, ledgerAccount };
    lastingCredits.keep(key, credit, lasting);
    return credit;
  }
  const row = await store.insertOrGet(tx, {
    id: randomUUID(),
    space_id: spaceId,
    client_ref: clientRef,
    currency: CREDIT_CURRENCY,
    ledger_account_id: ledgerAccount.id,
    contact_id: null,
    page_token: randomSecret('cr_'),
    created_at: at,
  });
  return {
    id: row.id,
    space_id: row.space_id,
    client_ref: row.client_ref,
    currency: row.currency,
    ledger_account_id: row.ledger_account_id,
    page_token: row.page_token,
    ledgerAccount,
  };
}

/** A client credit by its balance page's token. */
export function findCreditByPageToken(db: Queryable, token: string) {
  return store.findByPageToken(db, token);
}

export async function findClientCredit(db: Queryable, spaceId: string, id: string) {
  return store.findById(db, spaceId, id);
}

export function balanceUrl(publicUrl: string, pageToken: string): string {
  return `${publicUrl}/credit/${pageToken}`;
}

const HISTORY_LIMIT = 200;

/** Everything the public balance page shows; undefined for an unknown token. */
export async function creditPage(db: Queryable, token: string) {
  const credit = await store.findByPageToken(db, token);
  if (!credit) return undefined;
  // One client's balance, read from its own ledger account (not the whole space's list).
  const balance = await naturalBalanceOf(db, credit.ledger_account_id);
  const history = await store.history(db, credit.space_id, credit.id, HISTORY_LIMIT);
  return { credit, balance, ...history };
}

export async function listClientCredits(
  deps: { db: Db; publicUrl: string },
  userId: string,
  spaceId: string,
  query: { cursor?: string | undefined; id?: string } = {},
) {
  await requireRole(deps.db, spaceId, userId);
  const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  if (query.cursor !== undefined && before === undefined) {
    throw new AppError('invalid_request', 'The cursor is not one this list gave out.', { field: 'cursor' });
  }
  const rows = await store.listWithBalances(deps.db, spaceId, {
    before,
    limit: PAGE_SIZE + 1,
    ...(query.id === undefined ? {} : { id: query.id }),
  });
  const page = pageOf(rows, (row) => ({ at: row.created_at, id: row.id }));
  const items = page.items.map((row) => ({
    id: row.id,
    client_ref: row.client_ref,
    currency: row.currency,
    balance: formatAmount(naturalBalance('credit', readAmount(row.balance))),
    contact_id: row.contact_id,
    contact_name: row.contact_name ?? null,
    // Listed under the client_ref until a contact is named (spec §4 charges rule 6).
    label: row.contact_name ?? row.client_ref,
    last_call_at: row.last_call_at ? new Date(row.last_call_at as string | Date).toISOString() : null,
    top_ups: Number(row.top_ups ?? 0),
    balance_url: balanceUrl(deps.publicUrl, row.page_token),
    created_at: row.created_at.toISOString(),
  }));
  return { items, next_cursor: page.next_cursor };
}

export async function nameContact(
  deps: { db: Db; clock: Clock; publicUrl: string },
  userId: string,
  spaceId: string,
  clientRef: string,
  contactId: string,
) {
  await requireAdministrator(deps.db, spaceId, userId);
  const credit = await store.findByRef(deps.db, spaceId, clientRef, CREDIT_CURRENCY);
  if (!credit) throw new AppError('not_found', 'No client credit with this client_ref in this space.');
  if (!(await contactExists(deps.db, spaceId, contactId)))
    throw new AppError('invalid_request', 'No contact with this id in this space.', { field: 'contact_id' });
  await store.setContact(deps.db, spaceId, credit.id, contactId);
  const listed = await listClientCredits(deps, userId, spaceId, { id: credit.id });
  return defined(listed.items[0], 'the client credit just linked');
}

async function requireCredit(db: Queryable, spaceId: string, clientRef: string) {
  const credit = await store.findByRef(db, spaceId, clientRef, CREDIT_CURRENCY);
  if (!credit) throw new AppError('not_found', 'No client credit with this client_ref in this space.');
  return credit;
}

/** One client's page in the app: its balance, calls, top-ups and adjustments (any member). */
export async function clientDetail(
  deps: { db: Db; publicUrl: string },
  userId: string,
  spaceId: string,
  clientRef: string,
) {
  await requireRole(deps.db, spaceId, userId);
  const credit = await requireCredit(deps.db, spaceId, clientRef);
  const [listed, balance, history, adjustments] = await Promise.all([
    listClientCredits(deps, userId, spaceId, { id: credit.id }),
    naturalBalanceOf(deps.db, credit.ledger_account_id),
    store.history(deps.db, spaceId, credit.id, HISTORY_LIMIT),
    store.adjustments(deps.db, spaceId, credit.id, HISTORY_LIMIT),
  ]);
  return {
    credit: defined(listed.items[0], 'the client credit just read'),
    balance: formatAmount(balance),
    calls: history.calls,
    topUps: history.topUps,
    adjustments: adjustments.map((row) => ({
      ...row,
      amount: formatAmount(readAmount(row.amount)),
      kind: kindOf(readAmount(row.amount), row.refund),
    })),
  };
}

function kindOf(amount: AmountE8, refund: boolean) {
  const judged = adjustmentKind(amount, refund);
  return judged.ok ? judged.kind : 'correction';
}

/** An amount the schema's `signed` check let through. */
export function parseSignedAmount(value: number | string): AmountE8 {
  const parsed = parseAmountInput(value);
  if (!parsed.ok)
    throw new AppError('invalid_request', 'The amount is not a decimal number.', { field: 'amount' });
  return parsed.value;
}

export type AdjustmentInput = { amount: AmountE8; reason: string; refund: boolean };

/**
 * Owners and admins grant (+), correct (±) or refund (−) a client's credit, with a reason. Each
 * is one ledger entry with its adjustment row as a rider: a grant books the credit against the
 * expense `credit_grant` (a correction takes it back from there); a refund moves it to the
 * clearing account `refunds_due`, owed to the client until paid out. The credit's guarded
 * balance never goes below zero: such an adjustment is refused (422 insufficient_balance).
 */
export async function adjustCredit(
  deps: { db: Db; clock: Clock; publicUrl: string },
  userId: string,
  spaceId: string,
  clientRef: string,
  input: AdjustmentInput,
) {
  await requireAdministrator(deps.db, spaceId, userId);
  const judged = adjustmentKind(input.amount, input.refund);
  if (!judged.ok) throw new AppError('invalid_request', judged.detail, { field: judged.field });
  const credit = await requireCredit(deps.db, spaceId, clientRef);
  const at = deps.clock.now();
  const where = { spaceId, currency: credit.currency, at };
  const [creditAccount, counter] = await ensureLedgerAccounts(deps.db, [
    ledgerAccountSpecs.clientCredit({ ...where, clientRef }),
    judged.kind === 'refund'
      ? ledgerAccountSpecs.refundsDue(where)
      : ledgerAccountSpecs.expense({ ...where, ref: GRANT_EXPENSE }),
  ]);
  const size = asAmount(input.amount < 0n ? -input.amount : input.amount);
  const row: store.AdjustmentRow = {
    id: randomUUID(),
    space_id: spaceId,
    client_credit_id: credit.id,
    amount: formatAmount(input.amount),
    refund: input.refund,
    reason: input.reason,
    user_id: userId,
    created_at: at,
  };
  const postings =
    input.amount > 0n
      ? [increase(counter, size), increase(creditAccount, size)]
      : judged.kind === 'refund'
        ? [decrease(creditAccount, size), increase(counter, size)]
        : [decrease(creditAccount, size), decrease(counter, size)];
  const posted = await postEntry(
    deps.db,
    {
      spaceId,
      origin: 'manual',
      kind: judged.kind === 'refund' ? 'transfer' : 'expense',
      occurredOn: utcDateOf(at),
      causeType: 'credit_adjustment',
      causeId: row.id,
      counterparty: clientRef,
      memo: input.reason,
      postings,
    },
    at,
    [store.adjustmentRider(row)],
  );
  if (!posted.ok)
    throw new AppError(
      'insufficient_balance',
      `The credit holds ${formatMoneyForPeople(await naturalBalanceOf(deps.db, credit.ledger_account_id), credit.currency)}; it cannot go below zero.`,
      { field: 'amount' },
    );
  const listed = await listClientCredits(deps, userId, spaceId, { id: credit.id });
  return defined(listed.items[0], 'the client credit just adjusted');
}
