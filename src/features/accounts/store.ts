import { type Selectable, sql } from 'kysely';
import type { Cursor } from '../../core/cursor.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { readBeforeAnyWrite } from '../../platform/db/lasting.ts';
import { olderThan } from '../../platform/db/paging.ts';
import type { AccountsTable } from '../../platform/db/schema.ts';

export type AccountRow = Pick<
  Selectable<AccountsTable>,
  | 'id'
  | 'space_id'
  | 'kind'
  | 'name'
  | 'currency'
  | 'address'
  | 'chain'
  | 'network'
  | 'color'
  | 'details'
  | 'external_signer'
  | 'opening_acquired_on'
  | 'opening_balance'
  | 'opening_cost'
  | 'ledger_account_id'
  | 'address_proven'
  | 'requisites'
  | 'created_at'
>;

export type AccountWithBalance = AccountRow & { ledger_balance: string | null };

const COLUMNS = [
  'id',
  'space_id',
  'kind',
  'name',
  'currency',
  'address',
  'chain',
  'network',
  'color',
  'details',
  'external_signer',
  'opening_acquired_on',
  'opening_balance',
  'opening_cost',
  'ledger_account_id',
  'address_proven',
  'requisites',
  'created_at',
] as const;

const JOINED = [
  ...COLUMNS.map((column) => `accounts.${column}` as const),
  'ledger_accounts.balance as ledger_balance',
] as const;

const jsonOrNull = (value: Record<string, unknown> | null) => (value === null ? null : JSON.stringify(value));

export async function insertAccount(db: Queryable, row: AccountRow) {
  await db
    .insertInto('accounts')
    .values({ ...row, requisites: jsonOrNull(row.requisites) })
    .execute();
}

/** Changes an account's editable fields; undefined leaves a field as it is. */
export async function updateAccount(
  db: Queryable,
  spaceId: string,
  accountId: string,
  changes: {
    name?: string | undefined;
    color?: string | null | undefined;
    details?: string | undefined;
    requisites?: Record<string, unknown> | null | undefined;
  },
) {
  const { requisites, ...plain } = changes;
  const set = {
    ...Object.fromEntries(Object.entries(plain).filter(([, value]) => value !== undefined)),
    ...(requisites === undefined ? {} : { requisites: jsonOrNull(requisites) }),
  };
  if (Object.keys(set).length === 0) return;
  await db
    .updateTable('accounts')
    .set(set)
    .where('space_id', '=', spaceId)
    .where('id', '=', accountId)
    .execute();
}

/** An account's kind and currency (never changed once it is created), and whether it may be kept. */
export function findAccountFacts(db: Queryable, spaceId: string, accountId: string) {
  return db
    .selectFrom('accounts')
    .select(['id', 'kind', 'currency', readBeforeAnyWrite.as('lasting')])
    .where('space_id', '=', spaceId)
    .where('id', '=', accountId)
    .executeTakeFirst();
}

export function findAccount(
  db: Queryable,
  spaceId: string,
  accountId: string,
): Promise<AccountRow | undefined> {
  return db
    .selectFrom('accounts')
    .select(COLUMNS)
    .where('space_id', '=', spaceId)
    .where('id', '=', accountId)
    .executeTakeFirst();
}

/** One account with its balance. */
export function findAccountWithBalance(
  db: Queryable,
  spaceId: string,
  accountId: string,
): Promise<AccountWithBalance | undefined> {
  return db
    .selectFrom('accounts')
    .leftJoin('ledger_accounts', 'ledger_accounts.id', 'accounts.ledger_account_id')
    .select(JOINED)
    .where('accounts.space_id', '=', spaceId)
    .where('accounts.id', '=', accountId)
    .executeTakeFirst();
}

/** A page in creation order; `after` is the last id of the previous page. */
export async function listAccounts(db: Queryable, spaceId: string, limit: number, after: string | undefined) {
  let query = db
    .selectFrom('accounts')
    .leftJoin('ledger_accounts', 'ledger_accounts.id', 'accounts.ledger_account_id')
    .select(JOINED)
    .where('accounts.space_id', '=', spaceId);
  if (after !== undefined) {
    const anchor = await db
      .selectFrom('accounts')
      .select(['created_at', 'id'])
      .where('space_id', '=', spaceId)
      .where('id', '=', after)
      .executeTakeFirst();
    if (!anchor) return undefined;
    query = query.where((eb) =>
      eb.or([
        eb('accounts.created_at', '>', anchor.created_at),
        eb.and([eb('accounts.created_at', '=', anchor.created_at), eb('accounts.id', '>', anchor.id)]),
      ]),
    );
  }
  return query
    .orderBy('accounts.created_at')
    .orderBy('accounts.id')
    .limit(limit + 1)
    .execute();
}

/** The Accounts screen's page: the newest first, `limit` older than `before`. */
export function listAccountsNewestFirst(
  db: Queryable,
  spaceId: string,
  page: { before: Cursor | undefined; limit: number },
) {
  return db
    .selectFrom('accounts')
    .leftJoin('ledger_accounts', 'ledger_accounts.id', 'accounts.ledger_account_id')
    .select(JOINED)
    .where('accounts.space_id', '=', spaceId)
    .where(olderThan('accounts.created_at', 'accounts.id', page.before))
    .orderBy('accounts.created_at', 'desc')
    .orderBy('accounts.id', 'desc')
    .limit(page.limit)
    .execute();
}

/** The accounts a push source made for its account keys. */
export function findPushAccounts(db: Queryable, spaceId: string, pushSourceId: string, keys: string[]) {
  if (keys.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('accounts')
    .select(['id', 'currency', 'push_account_key', 'ledger_account_id'])
    .where('space_id', '=', spaceId)
    .where('push_source_id', '=', pushSourceId)
    .where('push_account_key', 'in', keys)
    .execute();
}

export async function setPushOrigin(db: Queryable, accountId: string, pushSourceId: string, key: string) {
  await db
    .updateTable('accounts')
    .set({ push_source_id: pushSourceId, push_account_key: key })
    .where('id', '=', accountId)
    .execute();
}

export async function setChallenge(db: Queryable, accountId: string, message: string, expiresAt: Date) {
  await db
    .updateTable('accounts')
    .set({ address_challenge: message, address_challenge_expires_at: expiresAt })
    .where('id', '=', accountId)
    .execute();
}

/** Reads and clears the pending challenge in one statement, so it can be answered once. */
export async function takeChallenge(db: Queryable, accountId: string) {
  // RETURNING shows the row after the update, so the old challenge is read in a locking subquery.
  const result = await sql<{ message: string | null; expires_at: Date | null }>`
    UPDATE accounts AS a SET address_challenge = NULL, address_challenge_expires_at = NULL
    FROM (SELECT id, address_challenge, address_challenge_expires_at FROM accounts WHERE id = ${accountId} FOR UPDATE) AS old
    WHERE a.id = old.id AND old.address_challenge IS NOT NULL
    RETURNING old.address_challenge AS message, old.address_challenge_expires_at AS expires_at`.execute(db);
  const row = result.rows[0];
  if (!row?.message || !row.expires_at) return undefined;
  return { message: row.message, expiresAt: new Date(row.expires_at) };
}

export async function markProven(db: Queryable, accountId: string, address: string, at: Date) {
  await db
    .updateTable('accounts')
    .set({ address_proven: address.toLowerCase(), address_proven_at: at })
    .where('id', '=', accountId)
    .execute();
}

/**
 * Crypto accounts, in any space, whose proven pay-to address is `address`: the facilitator's
 * lookup of who receives a payment. Oldest first, so the answer is stable.
 */
export function findProvenByAddress(db: Queryable, address: string) {
  return db
    .selectFrom('accounts')
    .select(COLUMNS)
    .where('address_proven', '=', address.toLowerCase())
    .where('kind', '=', 'crypto')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The edit's record: who, when and what changed (in the edit's transaction). */
export async function insertEdit(
  db: Queryable,
  row: {
    id: string;
    space_id: string;
    account_id: string;
    user_id: string;
    changed: Record<string, unknown>;
    created_at: Date;
  },
) {
  await db
    .insertInto('account_edits')
    .values({ ...row, changed: JSON.stringify(row.changed) })
    .execute();
}

/** An account's edits with who made them, newest first. */
export function listEdits(db: Queryable, spaceId: string, accountId: string, limit: number) {
  return db
    .selectFrom('account_edits')
    .innerJoin('users', 'users.id', 'account_edits.user_id')
    .select([
      'account_edits.id',
      'account_edits.changed',
      'account_edits.created_at',
      'users.name as by_name',
    ])
    .where('account_edits.space_id', '=', spaceId)
    .where('account_edits.account_id', '=', accountId)
    .orderBy('account_edits.created_at', 'desc')
    .orderBy('account_edits.id', 'desc')
    .limit(limit)
    .execute();
}
