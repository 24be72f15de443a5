import { randomUUID } from 'node:crypto';
import { defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { PAGE_SIZE, pageOf, readCursor } from '../../core/cursor.ts';
import { utcDateOf } from '../../core/day.ts';
import { changedFields } from '../../core/edits.ts';
import { AppError } from '../../core/errors.ts';
import {
  type AmountE8,
  asAmount,
  formatAmount,
  parseAmountInput,
  parseDecimalText,
} from '../../core/money.ts';
import { type Db, inTransaction, type Queryable } from '../../platform/db/database.ts';
import { CommittedRows } from '../../platform/db/lasting.ts';
import type { IntegrationCaller } from '../../platform/http/context.ts';
import { type Member, spaceOfMember } from '../../platform/http/member.ts';
import { normalizeRequisites, type Requisites, type RequisitesInput } from '../contacts/index.ts';
import { increase, ledgerAccounts, postEntry } from '../ledger/index.ts';
import { requireWriting } from '../spaces/index.ts';
import { normalizeAccount, refuseRequisitesOffBank } from './domain.ts';
import * as store from './store.ts';

export type AccountsDeps = { db: Db; clock: Clock };

export type AccountCreateInput = {
  kind: store.AccountRow['kind'];
  name: string;
  currency: string;
  address?: string | null;
  chain?: string | null;
  network?: string | null;
  color?: string | null;
  details?: string;
  requisites?: RequisitesInput | null;
  external_signer?: boolean;
  opening_acquired_on?: string | null;
  opening_balance?: number | string;
  opening_cost?: number | string | null;
};

function amountOf(value: number | string | null | undefined): AmountE8 | null {
  if (value === undefined || value === null) return null;
  const parsed = parseAmountInput(value);
  // The schema's x-amount keyword has already refused anything that does not parse.
  if (!parsed.ok) throw new AppError('invalid_request', 'The amount is not a decimal.');
  return parsed.value;
}

function readAmount(text: string): AmountE8 {
  const parsed = parseDecimalText(text);
  if (!parsed.ok) throw new Error(`The database returned a non-decimal amount: ${text}`);
  return parsed.value;
}

export function presentAccount(row: store.AccountWithBalance) {
  return {
    id: row.id,
    kind: row.kind,
    name: row.name,
    currency: row.currency,
    address: row.address,
    chain: row.chain,
    network: row.network,
    color: row.color,
    details: row.details,
    requisites: (row.requisites ?? null) as Requisites | null,
    external_signer: row.external_signer,
    opening_acquired_on: row.opening_acquired_on,
    opening_balance: formatAmount(readAmount(row.opening_balance)),
    opening_cost: row.opening_cost === null ? null : formatAmount(readAmount(row.opening_cost)),
    // The ledger keeps the asset account's signed sum; for an asset that is the balance itself.
    balance: formatAmount(readAmount(row.ledger_balance ?? '0')),
    address_proven: row.address !== null && row.address_proven === row.address.toLowerCase(),
    created_at: row.created_at.toISOString(),
  };
}

export async function createAccount(
  tx: Queryable,
  clock: Clock,
  caller: Pick<IntegrationCaller, 'spaceId'>,
  input: AccountCreateInput,
) {
  const shape = normalizeAccount({
    kind: input.kind,
    currency: input.currency,
    address: input.address ?? null,
    chain: input.chain ?? null,
    network: input.network ?? null,
    color: input.color ?? null,
  });
  const requisites = checkedRequisites(shape.kind, input.requisites);
  const openingBalance = amountOf(input.opening_balance) ?? asAmount(0n);
  const openingCost = amountOf(input.opening_cost);
  const at = clock.now();
  const id = randomUUID();
  const where = { spaceId: caller.spaceId, currency: shape.currency, at };
  const asset = await ledgerAccounts.asset(tx, { ...where, accountId: id });
  const row: store.AccountRow = {
    id,
    space_id: caller.spaceId,
    kind: shape.kind as store.AccountRow['kind'],
    name: input.name,
    currency: shape.currency,
    address: shape.address,
    chain: shape.chain,
    network: shape.network,
    color: shape.color,
    details: input.details ?? '',
    external_signer: input.external_signer ?? false,
    opening_acquired_on: input.opening_acquired_on ?? null,
    opening_balance: formatAmount(openingBalance),
    opening_cost: openingCost === null ? null : formatAmount(openingCost),
    ledger_account_id: asset.id,
    // A new account has proved no address yet.
    address_proven: null,
    requisites,
    created_at: at,
  };
  await store.insertAccount(tx, row);
  if (openingBalance !== 0n) {
    // The opening balance is an entry like any other: the asset against opening equity.
    const equity = await ledgerAccounts.openingEquity(tx, where);
    const posted = await postEntry(
      tx,
      {
        spaceId: caller.spaceId,
        origin: 'manual',
        kind: 'transfer',
        occurredOn: row.opening_acquired_on ?? utcDateOf(at),
        causeType: 'opening_balance',
        causeId: id,
        postings: [increase(asset, openingBalance), increase(equity, openingBalance)],
      },
      at,
    );
    if (!posted.ok)
      throw new Error('An asset account has no overdraft guard; the opening entry cannot be refused.');
  }
  return presentAccount({ ...row, ledger_balance: formatAmount(openingBalance) });
}

/**
 * Requisites checked by the one set of rules for bank details (features/contacts: IBAN mod-97,
 * BIC shape, sort code, ABA routing), on a bank account only.
 */
function checkedRequisites(kind: string, input: RequisitesInput | null | undefined): Requisites | null {
  refuseRequisitesOffBank(kind, input != null);
  return input == null ? null : normalizeRequisites(input, 'requisites');
}

export type AccountPatchInput = {
  name?: string | undefined;
  color?: string | null | undefined;
  details?: string | undefined;
  requisites?: RequisitesInput | null | undefined;
};

/** PATCH …/accounts/{account_id} (owners, admins, members): name, colour, details, requisites. */
export async function updateAccountInApp(
  deps: AccountsDeps,
  member: Member,
  accountId: string,
  patch: AccountPatchInput,
) {
  const spaceId = spaceOfMember(requireWriting(member));
  // The account is the address's subject here: another book's account is not found (404).
  const row = await store.findAccount(deps.db, spaceId, accountId);
  if (!row) throw new AppError('not_found', 'No account with this id in this space.');
  const color =
    patch.color === undefined ? undefined : normalizeAccount({ ...row, color: patch.color }).color;
  const requisites =
    patch.requisites === undefined ? undefined : checkedRequisites(row.kind, patch.requisites);
  const given = { name: patch.name, color, details: patch.details, requisites };
  const changed = changedFields(row, given);
  // Only a real change is written, and it is written with its record: who, when, what changed.
  if (Object.keys(changed).length > 0) {
    await inTransaction(deps.db, async (tx) => {
      await store.updateAccount(tx, spaceId, accountId, given);
      await store.insertEdit(tx, {
        id: randomUUID(),
        space_id: spaceId,
        account_id: accountId,
        user_id: member.userId,
        changed,
        created_at: deps.clock.now(),
      });
    });
  }
  return readAccountInApp(deps, member, accountId);
}

const EDITS_SHOWN = 50;

/** An account's recorded edits, newest first (its page lists them). */
export async function accountEditsInApp(deps: AccountsDeps, member: Member, accountId: string) {
  const rows = await store.listEdits(deps.db, spaceOfMember(member), accountId, EDITS_SHOWN);
  return rows.map((row) => ({
    id: row.id,
    at: row.created_at.toISOString(),
    by: row.by_name,
    changed: row.changed as Record<string, { from: unknown; to: unknown }>,
  }));
}

/** One account of the member's space, with its balance. */
export async function readAccountInApp(deps: AccountsDeps, member: Member, accountId: string) {
  const spaceId = spaceOfMember(member);
  const row = await store.findAccountWithBalance(deps.db, spaceId, accountId);
  if (!row) throw new AppError('not_found', 'No account with this id in this space.');
  return presentAccount(row);
}

export async function listAccounts(
  deps: AccountsDeps,
  caller: IntegrationCaller,
  query: { limit?: string; starting_after?: string },
) {
  const limit = query.limit === undefined ? 100 : Number(query.limit);
  if (limit < 1 || limit > 500) {
    throw new AppError('invalid_request', 'limit must be from 1 to 500.', { field: 'limit' });
  }
  const rows = await store.listAccounts(deps.db, caller.spaceId, limit, query.starting_after);
  if (rows === undefined) throw new AppError('not_found', 'starting_after names no account of this space.');
  return { items: rows.slice(0, limit).map(presentAccount), has_more: rows.length > limit };
}

/** For other features: an account of this space, or 422 account_not_found. */
export async function requireAccount(db: Queryable, spaceId: string, accountId: string) {
  const row = await store.findAccount(db, spaceId, accountId);
  if (!row)
    throw new AppError('account_not_found', 'No account with this id in this space.', {
      account_id: accountId,
    });
  return row;
}

export type AccountFacts = { id: string; kind: string; currency: string };

// An account's kind and currency never change and accounts are never deleted: once read from a
// committed row they are kept by (space, id) (see platform/db/lasting.ts).
const lastingFacts = new CommittedRows<AccountFacts>();

/** An account's kind and currency, for a caller that needs no more (a charge); 422 when unknown. */
export async function requireAccountFacts(
  db: Queryable,
  spaceId: string,
  accountId: string,
): Promise<AccountFacts> {
  const key = `${spaceId}|${accountId}`;
  const known = lastingFacts.get(key);
  if (known) return known;
  const row = await store.findAccountFacts(db, spaceId, accountId);
  if (!row)
    throw new AppError('account_not_found', 'No account with this id in this space.', {
      account_id: accountId,
    });
  const facts = { id: row.id, kind: row.kind, currency: row.currency };
  lastingFacts.keep(key, facts, row.lasting);
  return facts;
}

/** For other features: every account of a space, with its balance. */
export function listSpaceAccounts(db: Queryable, spaceId: string) {
  return store.listAccounts(db, spaceId, 1000, undefined).then((rows) => rows ?? []);
}

export type PushAccount = { id: string; currency: string; key: string; created: boolean };

/** The accounts a push source already made for these keys (none is created). */
async function knownPushAccounts(
  tx: Queryable,
  spaceId: string,
  pushSourceId: string,
  keys: string[],
): Promise<Map<string, PushAccount>> {
  const found = await store.findPushAccounts(tx, spaceId, pushSourceId, keys);
  return new Map(
    found.map((row) => {
      const key = defined(row.push_account_key, "a push account's key");
      return [key, { id: row.id, currency: row.currency, key, created: false }];
    }),
  );
}

/**
 * The account behind each account key of a push source, creating the missing ones (a bank
 * account named after the key, in the currency of the first row that names it).
 */
export async function resolvePushAccounts(
  tx: Queryable,
  clock: Clock,
  spaceId: string,
  pushSourceId: string,
  wanted: { key: string; currency: string }[],
): Promise<Map<string, PushAccount>> {
  const keys = [...new Set(wanted.map((item) => item.key))];
  const accounts = await knownPushAccounts(tx, spaceId, pushSourceId, keys);
  for (const item of wanted) {
    if (accounts.has(item.key)) continue;
    const caller = { spaceId, keyId: '', issuerUserId: '', scopes: [], pushSourceId };
    const made = await createAccount(tx, clock, caller, {
      kind: 'bank',
      name: item.key.slice(0, 120),
      currency: item.currency,
    });
    await store.setPushOrigin(tx, made.id, pushSourceId, item.key);
    accounts.set(item.key, { id: made.id, currency: made.currency, key: item.key, created: true });
  }
  return accounts;
}

/** Crypto accounts whose proven address is `address`, across spaces (oldest first). */
export function findProvenAccounts(db: Queryable, address: string) {
  return store.findProvenByAddress(db, address);
}

/** The app's Accounts screen and API: members and up create; anyone in the space reads. */
/**
 * Marks an account's address proven without a signed challenge: for an address whose key this
 * server made itself (an agent's hot wallet), the key is the proof.
 */
export async function markServerProven(tx: Queryable, clock: Clock, accountId: string, address: string) {
  await store.markProven(tx, accountId, address, clock.now());
}

export async function createAccountInApp(deps: AccountsDeps, member: Member, input: AccountCreateInput) {
  const spaceId = spaceOfMember(requireWriting(member));
  return deps.db.transaction().execute((tx) => createAccount(tx, deps.clock, { spaceId }, input));
}

/** The space's accounts for a proven member, newest first (app API and the Accounts page). */
export async function listAccountsInApp(
  deps: AccountsDeps,
  member: Member,
  query: { cursor?: string | undefined },
) {
  const spaceId = spaceOfMember(member);
  const before = readCursor(query.cursor);
  const rows = await store.listAccountsNewestFirst(deps.db, spaceId, { before, limit: PAGE_SIZE + 1 });
  const page = pageOf(rows, (row) => ({ at: row.created_at, id: row.id }));
  return { items: page.items.map(presentAccount), next_cursor: page.next_cursor };
}
