import { type Selectable, sql } from 'kysely';
import { assert } from '../../core/assert.ts';
import { parseDecimalText } from '../../core/money.ts';
import type { Queryable } from '../../platform/db/database.ts';
import type { PayoutStatus, PayoutsTable } from '../../platform/db/schema.ts';
import { statusChangeReason } from './domain.ts';

export type PayoutRow = Selectable<PayoutsTable>;

const COLUMNS = [
  'id',
  'space_id',
  'account_id',
  'maker_id',
  'amount',
  'currency',
  'rail',
  'payee',
  'destination',
  'requisites',
  'contact_id',
  'note',
  'occurred_on',
  'status',
  'approval_rule_id',
  'required_approvals',
  'blocked_reason',
  'release_reason',
  'released_by',
  'reject_reason',
  'rejected_by',
  'reference',
  'transaction_id',
  'tx_hash',
  'created_at',
  'approved_at',
  'executed_at',
  'updated_at',
] as const;

function selectPayouts(db: Queryable) {
  return db
    .selectFrom('payouts')
    .select([...COLUMNS.filter((c) => c !== 'occurred_on' && c !== 'amount')])
    .select(sql<string>`occurred_on::text`.as('occurred_on'))
    .select(sql<string>`amount::text`.as('amount'));
}

export async function insertPayout(db: Queryable, row: PayoutRow) {
  await db
    .insertInto('payouts')
    .values({ ...row, requisites: row.requisites === null ? null : JSON.stringify(row.requisites) })
    .execute();
}

export async function findPayout(db: Queryable, spaceId: string, id: string): Promise<PayoutRow | undefined> {
  return selectPayouts(db).where('space_id', '=', spaceId).where('id', '=', id).executeTakeFirst();
}

/** The payment under its row lock: every change of a payment's status happens under it. */
export async function lockPayout(db: Queryable, spaceId: string, id: string): Promise<PayoutRow | undefined> {
  return selectPayouts(db)
    .where('space_id', '=', spaceId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export async function updatePayout(
  db: Queryable,
  spaceId: string,
  id: string,
  changes: Partial<Omit<PayoutRow, 'id' | 'space_id' | 'requisites'>>,
) {
  const update = db.updateTable('payouts').set(changes).where('space_id', '=', spaceId).where('id', '=', id);
  if (changes.status === undefined) {
    await update.execute();
    return;
  }
  // A change of status also writes its step of the payment's history, in the same statement:
  // `before` reads the row as it was when the statement began (the caller holds its lock).
  assert(changes.updated_at !== undefined, 'A change of status says when it happened');
  const reason = statusChangeReason({ ...changes, status: changes.status });
  await sql`
    WITH before AS (SELECT status FROM payouts WHERE space_id = ${spaceId} AND id = ${id}),
    after AS (${update.returning('status')})
    INSERT INTO payout_status_changes (space_id, payout_id, from_status, to_status, reason, changed_at)
    SELECT ${spaceId}::uuid, ${id}::uuid, before.status, after.status, ${reason}::text,
      ${changes.updated_at}::timestamptz
    FROM before, after
    WHERE before.status <> after.status`.execute(db);
}

export async function listPayouts(
  db: Queryable,
  query: {
    spaceId: string;
    status: PayoutStatus | undefined;
    after: { createdAt: Date; id: string } | undefined;
    limit: number;
  },
): Promise<PayoutRow[]> {
  let select = selectPayouts(db).where('space_id', '=', query.spaceId);
  if (query.status !== undefined) select = select.where('status', '=', query.status);
  if (query.after !== undefined) {
    const after = query.after;
    select = select.where((eb) =>
      eb.or([
        eb('created_at', '<', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)]),
      ]),
    );
  }
  return select.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
}

/** Adds one person's approval; false when that person had already approved. */
export async function addApproval(
  db: Queryable,
  row: { space_id: string; payout_id: string; user_id: string; created_at: Date },
): Promise<boolean> {
  const result = await db
    .insertInto('payout_approvals')
    .values(row)
    .onConflict((conflict) => conflict.columns(['payout_id', 'user_id']).doNothing())
    .returning('user_id')
    .executeTakeFirst();
  return result !== undefined;
}

export async function approvalsOf(db: Queryable, spaceId: string, payoutIds: string[]) {
  if (payoutIds.length === 0) return [];
  return db
    .selectFrom('payout_approvals')
    .select(['payout_id', 'user_id', 'created_at'])
    .where('space_id', '=', spaceId)
    .where('payout_id', 'in', payoutIds)
    .orderBy('created_at')
    .execute();
}

/**
 * Locks the space's max_per_day rules (in id order), so payments that count a day's total
 * against them queue one after another: each then reads what the previous committed.
 */
export async function lockDayRules(db: Queryable, spaceId: string) {
  await sql`
    SELECT id FROM policy_rules
    WHERE space_id = ${spaceId} AND kind = 'max_per_day' AND removed_at IS NULL
    ORDER BY id FOR UPDATE`.execute(db);
}

/**
 * What payments in `currency` approved in [start, end) and in one of `counted` (the domain's
 * COUNTED_IN_DAY) add up to. The day's bounds are core/day.ts's, passed in.
 */
export async function leftInDay(
  db: Queryable,
  query: {
    spaceId: string;
    currency: string;
    start: Date;
    end: Date;
    exceptId: string;
    counted: readonly PayoutStatus[];
  },
): Promise<string> {
  const result = await sql<{ total: string }>`
    SELECT COALESCE(SUM(amount), 0)::text AS total FROM payouts
    WHERE space_id = ${query.spaceId} AND currency = ${query.currency}
      AND status = ANY(${[...query.counted]}::text[])
      AND approved_at >= ${query.start} AND approved_at < ${query.end}
      AND id <> ${query.exceptId}`.execute(db);
  return result.rows[0]?.total ?? '0';
}

export async function activeApprovalRules(db: Queryable, spaceId: string) {
  return db
    .selectFrom('approval_rules')
    .select([
      'id',
      sql<string>`min_amount::text`.as('min_amount'),
      'currency',
      'required_approvals',
      'created_at',
    ])
    .where('space_id', '=', spaceId)
    .where('removed_at', 'is', null)
    .orderBy('created_at')
    .execute();
}

export async function insertApprovalRule(
  db: Queryable,
  row: {
    id: string;
    space_id: string;
    min_amount: string;
    currency: string;
    required_approvals: number;
    created_by: string;
    created_at: Date;
  },
) {
  await db.insertInto('approval_rules').values(row).execute();
}

export async function removeRule(
  db: Queryable,
  table: 'approval_rules' | 'policy_rules',
  spaceId: string,
  id: string,
  at: Date,
): Promise<boolean> {
  const result = await db
    .updateTable(table)
    .set({ removed_at: at })
    .where('space_id', '=', spaceId)
    .where('id', '=', id)
    .where('removed_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function activePolicyRules(db: Queryable, spaceId: string) {
  return db
    .selectFrom('policy_rules')
    .select([
      'id',
      'kind',
      sql<string | null>`amount::text`.as('amount'),
      'currency',
      'destination',
      'currencies',
      'created_at',
    ])
    .where('space_id', '=', spaceId)
    .where('removed_at', 'is', null)
    .orderBy('created_at')
    .execute();
}

export async function insertPolicyRule(
  db: Queryable,
  row: {
    id: string;
    space_id: string;
    kind: 'max_per_payment' | 'max_per_day' | 'blocked_destination' | 'allowed_currencies';
    amount: string | null;
    currency: string | null;
    destination: string | null;
    currencies: string[] | null;
    created_by: string;
    created_at: Date;
  },
) {
  await db.insertInto('policy_rules').values(row).execute();
}

/** A chain payment waiting for its transfer, by the hash a person reported or the watch saw. */
export async function findByTxHash(db: Queryable, txHash: string) {
  return db
    .selectFrom('payouts')
    .select(['id', 'space_id'])
    .where('tx_hash', '=', txHash.toLowerCase())
    .executeTakeFirst();
}

export function amountOf(row: { amount: string }) {
  return readAmount(row.amount);
}

function readAmount(text: string) {
  const parsed = parseDecimalText(text);
  assert(parsed.ok, `The database returned a non-decimal amount: ${text}`);
  return parsed.value;
}

/** Chain payments the worker follows: waiting for confirmations, or executed recently enough to be reorganised away. */
export async function chainPayoutsToFollow(db: Queryable, executedSince: Date, limit: number) {
  return db
    .selectFrom('payouts')
    .select(['id', 'space_id', 'maker_id'])
    .where('rail', '=', 'chain')
    .where('tx_hash', 'is not', null)
    .where((eb) =>
      eb.or([
        eb('status', '=', 'executing'),
        eb.and([eb('status', '=', 'executed'), eb('executed_at', '>=', executedSince)]),
      ]),
    )
    .orderBy('updated_at')
    .limit(limit)
    .execute();
}

/** A payment's status changes, oldest first (written by the trigger of migration 0050). */
export async function statusChangesOf(db: Queryable, spaceId: string, payoutId: string) {
  return db
    .selectFrom('payout_status_changes')
    .select(['to_status', 'reason', 'changed_at'])
    .where('space_id', '=', spaceId)
    .where('payout_id', '=', payoutId)
    .orderBy('id')
    .execute();
}

/** The approval rule a payment met, even if it was removed since. */
export async function findApprovalRule(db: Queryable, spaceId: string, ruleId: string) {
  return db
    .selectFrom('approval_rules')
    .select(['id', sql<string>`min_amount::text`.as('min_amount'), 'currency', 'required_approvals'])
    .where('space_id', '=', spaceId)
    .where('id', '=', ruleId)
    .executeTakeFirst();
}

/** Payments held by screening, newest first: the Screening screen's queue. */
export async function heldPayouts(db: Queryable, spaceId: string, limit: number): Promise<PayoutRow[]> {
  return selectPayouts(db)
    .where('space_id', '=', spaceId)
    .where('status', '=', 'blocked')
    .where('blocked_reason', '=', 'screening_hold')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
