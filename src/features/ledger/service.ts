import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { assert, defined } from '../../core/assert.ts';
import { PAGE_SIZE } from '../../core/cursor.ts';
import { AppError } from '../../core/errors.ts';
import { decodeKeyCursor, pageByKey } from '../../core/key-cursor.ts';
import { type AmountE8, formatAmount, parseDecimalText } from '../../core/money.ts';
import { uuidv7 } from '../../platform/crypto.ts';
import { inTransaction, type Queryable } from '../../platform/db/database.ts';
import {
  balanceUpdates,
  type EntryDraft,
  imbalance,
  isWellFormed,
  type LedgerAccountKind,
  type LedgerAccountRef,
  naturalBalance,
  type Posting,
  type PostResult,
  reversalOf,
} from './domain.ts';
import { incomeDayRows } from './income-days.ts';
import * as store from './store.ts';

// Every movement of money goes through postEntry: it checks the entry balances, moves the
// tracked balances under their row locks (refusing an overdraft as a value, not an error), and
// writes the entry and its postings. The database checks the balance again at commit.

export function readAmount(text: string): AmountE8 {
  const parsed = parseDecimalText(text);
  assert(parsed.ok, `The database returned a non-decimal amount: ${text}`);
  return parsed.value;
}

export async function postEntry(
  tx: Queryable,
  draft: EntryDraft,
  at: Date,
  riders: store.EntryRider[] = [],
): Promise<PostResult> {
  const { updates, entry, postings } = spellEntry(draft, at);
  const [only] = updates;
  if (updates.length === 1 && only) {
    // The common case (a charge, a settlement into an untracked income account): one statement
    // moves the balance and files the entry, or does nothing when the guard refuses.
    const balance = await store.moveAndInsertEntry(
      tx,
      { account: only.account, delta: formatAmount(only.delta), guard: only.account.noOverdraft },
      entry,
      postings,
      riders,
    );
    if (balance === undefined) {
      assert(only.account.noOverdraft, `No ledger account ${only.account.id} to move`);
      return { ok: false, code: 'insufficient_balance', ledgerAccountId: only.account.id };
    }
    const balances = new Map([
      [only.account.id, naturalBalance(only.account.normalSide, readAmount(balance))],
    ]);
    return { ok: true, entryId: entry.id, balances };
  }
  // Several statements from here on: only a transaction makes them one write.
  assert(tx.isTransaction, 'An entry that moves several balances must be posted in a transaction');
  const guarded = updates.some((update) => update.account.noOverdraft);
  // A refused overdraft must leave the caller's transaction usable (a refused charge still
  // mints its top-up request), so the balance moves are undone to a savepoint, not aborted.
  if (guarded) await sql`SAVEPOINT ledger_post`.execute(tx);
  const balances = new Map<string, AmountE8>();
  for (const { account, delta } of updates) {
    const balance = await store.applyDelta(tx, account, formatAmount(delta), account.noOverdraft);
    if (balance === undefined) {
      await sql`ROLLBACK TO SAVEPOINT ledger_post`.execute(tx);
      return { ok: false, code: 'insufficient_balance', ledgerAccountId: account.id };
    }
    balances.set(account.id, naturalBalance(account.normalSide, readAmount(balance)));
  }
  if (guarded) await sql`RELEASE SAVEPOINT ledger_post`.execute(tx);
  await store.insertEntry(tx, entry, postings);
  await store.insertRiders(tx, entry.id, riders);
  return { ok: true, entryId: entry.id, balances };
}

/** An entry checked and spelled for the store, with the balance moves it makes. */
function spellEntry(draft: EntryDraft, at: Date) {
  assert(
    isWellFormed(draft.postings),
    `Unbalanced ledger entry: ${JSON.stringify([...imbalance(draft.postings)].map(String))}`,
  );
  const entry: store.EntryInsert = { ...entryColumns(draft, randomUUID), at };
  return { updates: balanceUpdates(draft.postings), entry, postings: postingColumns(draft) };
}

/** An entry's own columns, however it is filed; `newId` names it when the draft does not. */
function entryColumns(draft: EntryDraft, newId: () => string) {
  return {
    id: draft.id ?? newId(),
    spaceId: draft.spaceId,
    origin: draft.origin,
    kind: draft.kind,
    occurredOn: draft.occurredOn,
    causeType: draft.causeType,
    causeId: draft.causeId,
    counterparty: draft.counterparty ?? '',
    memo: draft.memo ?? '',
    reversesEntryId: draft.reversesEntryId ?? null,
  };
}

function postingColumns(draft: EntryDraft) {
  return draft.postings.map((posting) => ({
    accountId: posting.account.id,
    currency: posting.account.currency,
    amount: formatAmount(posting.amount),
  }));
}

export type ConditionalPostResult = { ok: true; entryId: string } | { ok: false; code: 'condition_unmet' };

/**
 * Posts an entry only if `condition` (a feature's guarded write, see EntryCondition) takes
 * effect, in one statement when the entry moves one balance: the condition's write, the move,
 * the entry with its postings and the riders then stand or fall together, with no transaction.
 * The entry may lower no guarded balance, so the condition is the only thing that can refuse it.
 * Moving several balances takes a transaction (the caller's, or one opened here).
 */
export async function postEntryIf(
  tx: Queryable,
  condition: store.EntryCondition,
  draft: EntryDraft,
  at: Date,
  riders: store.EntryRider[] = [],
): Promise<ConditionalPostResult> {
  const { updates, entry, postings } = spellEntry(draft, at);
  // A guarded balance may only rise (a top-up crediting a client): then no guard can refuse.
  assert(
    updates.every(
      (update) =>
        !update.account.noOverdraft || naturalBalance(update.account.normalSide, update.delta) >= 0n,
    ),
    'A conditional entry lowers no guarded balance',
  );
  const [only] = updates;
  if (updates.length === 1 && only) {
    const move = { account: only.account, delta: formatAmount(only.delta), guard: false };
    const balance = await store.moveAndInsertEntry(tx, move, entry, postings, riders, condition);
    return balance === undefined ? { ok: false, code: 'condition_unmet' } : { ok: true, entryId: entry.id };
  }
  // Several statements from here on: in the caller's transaction, or in one of its own, so the
  // condition and the entry still stand or fall together.
  if (!tx.isTransaction)
    return inTransaction(tx, (inner) => postEntryIf(inner, condition, draft, at, riders));
  if (!(await store.meetsCondition(tx, condition))) return { ok: false, code: 'condition_unmet' };
  const posted = await postEntry(tx, draft.id ? draft : { ...draft, id: entry.id }, at, riders);
  assert(posted.ok, 'An entry with no guarded balance is never refused');
  return { ok: true, entryId: posted.entryId };
}

/** Undoes an entry with a new one of opposite postings (once: a second reversal is refused). */
export async function reverseEntry(
  tx: Queryable,
  spaceId: string,
  entryId: string,
  at: Date,
  occurredOn: string,
  memo = '',
): Promise<PostResult> {
  const entry = await store.findEntry(tx, spaceId, entryId);
  assert(entry, `No ledger entry ${entryId} in space ${spaceId}`);
  const postings: Posting[] = (await store.postingsOfEntries(tx, spaceId, [entryId])).map((row) => ({
    account: row.account,
    amount: readAmount(row.amount),
  }));
  return postEntry(
    tx,
    {
      spaceId,
      origin: entry.origin,
      kind: entry.kind,
      occurredOn,
      causeType: 'reversal',
      causeId: entry.id,
      counterparty: entry.counterparty,
      memo,
      reversesEntryId: entry.id,
      postings: reversalOf(postings),
    },
    at,
  );
}

/** Entries checked and spelled for filing, with the balance moves they make: no I/O yet. */
export type PreparedEntries = {
  rows: store.EntryRow[];
  at: Date;
  deltas: { id: string; delta: string }[];
};

/**
 * Checks and spells many entries for `fileEntries` (pure, so a caller can do it while the
 * database is busy with something else): every entry must balance, tracked balances move once
 * per account (in the global order), and guarded accounts are not allowed (a refusal would have
 * to be per entry).
 */
export function prepareEntries(drafts: EntryDraft[], at: Date): PreparedEntries {
  for (const draft of drafts) assert(isWellFormed(draft.postings), 'Unbalanced ledger entry in a bulk post');
  const updates = balanceUpdates(drafts.flatMap((draft) => draft.postings));
  assert(
    updates.every((update) => !update.account.noOverdraft),
    'postEntries takes no guarded accounts',
  );
  const rows = drafts.map((draft) => ({ ...entryColumns(draft, uuidv7), postings: postingColumns(draft) }));
  return {
    rows,
    at,
    deltas: updates.map(({ account, delta }) => ({ id: account.id, delta: formatAmount(delta) })),
  };
}

/**
 * Files prepared entries: balances first (locked in id order), then the entries with their
 * postings in one statement.
 */
export async function fileEntries(tx: Queryable, prepared: PreparedEntries): Promise<string[]> {
  await store.applyDeltas(tx, prepared.deltas);
  await store.insertEntriesDocument(tx, store.entriesDocument(prepared.rows), prepared.at);
  return prepared.rows.map((row) => row.id);
}

/** Many entries at once, for imports: `prepareEntries` then `fileEntries`. */
export function postEntries(tx: Queryable, drafts: EntryDraft[], at: Date): Promise<string[]> {
  return fileEntries(tx, prepareEntries(drafts, at));
}

/** Reverses many entries at once (an undone import); answers the new entries, in order. */
export async function reverseEntries(
  tx: Queryable,
  spaceId: string,
  entryIds: string[],
  at: Date,
  memo: string,
) {
  const rows = await store.postingsOfEntries(tx, spaceId, entryIds);
  const byEntry = new Map<string, typeof rows>();
  for (const row of rows) byEntry.set(row.entry_id, [...(byEntry.get(row.entry_id) ?? []), row]);
  const drafts: EntryDraft[] = entryIds.map((entryId) => {
    const postings = byEntry.get(entryId) ?? [];
    const first = postings[0];
    assert(first, `No postings for entry ${entryId}`);
    return {
      spaceId,
      origin: first.origin,
      kind: first.kind,
      occurredOn: first.occurred_on,
      causeType: 'reversal',
      causeId: entryId,
      counterparty: first.counterparty,
      memo,
      reversesEntryId: entryId,
      postings: reversalOf(
        postings.map((posting) => ({ account: posting.account, amount: readAmount(posting.amount) })),
      ),
    };
  });
  const ids = await postEntries(tx, drafts, at);
  return drafts.map((draft, index) => ({ draft, entryId: defined(ids[index], 'a posted entry id') }));
}

type Where = { spaceId: string; currency: string; at: Date };

/** What each kind of ledger account is: the rules a ledger account is created with. */
export const ledgerAccountSpecs = {
  /** A user account's money: can go negative (a bank overdraft is a fact to record, not refuse). */
  asset: (where: Where & { accountId: string }): store.LedgerAccountSpec => ({
    ...where,
    kind: 'asset',
    ref: where.accountId,
    normalSide: 'debit',
    tracksBalance: true,
    noOverdraft: false,
  }),
  /** Income of one endpoint (or "general"). Not tracked: its rows are summed when read. */
  income: (where: Where & { resourceId: string | null }): store.LedgerAccountSpec => ({
    ...where,
    kind: 'income',
    ref: where.resourceId ?? 'general',
    normalSide: 'credit',
    tracksBalance: false,
    noOverdraft: false,
  }),
  /** What the seller owes one client in prepaid credit: never below zero. */
  clientCredit: (where: Where & { clientRef: string }): store.LedgerAccountSpec => ({
    ...where,
    kind: 'client_credit',
    ref: where.clientRef,
    normalSide: 'credit',
    tracksBalance: true,
    noOverdraft: true,
  }),
  /** Money spent, by what it was spent on ("import:<source>" for pushed rows). Not tracked. */
  expense: (where: Where & { ref: string }): store.LedgerAccountSpec => ({
    ...where,
    kind: 'expense',
    normalSide: 'debit',
    tracksBalance: false,
    noOverdraft: false,
  }),
  /** Income that belongs to no endpoint (pushed rows: "import:<source>"). */
  otherIncome: (where: Where & { ref: string }): store.LedgerAccountSpec => ({
    ...where,
    kind: 'income',
    normalSide: 'credit',
    tracksBalance: false,
    noOverdraft: false,
  }),
  openingEquity: (where: Where): store.LedgerAccountSpec => ({
    ...where,
    kind: 'equity',
    ref: 'opening',
    normalSide: 'credit',
    tracksBalance: false,
    noOverdraft: false,
  }),
  /** Prepaid credit refunded to clients and not yet paid out to them (a refund by hand). */
  refundsDue: (where: Where): store.LedgerAccountSpec => ({
    ...where,
    kind: 'clearing',
    ref: 'refunds_due',
    normalSide: 'credit',
    tracksBalance: false,
    noOverdraft: false,
  }),
  /** The bridge between pegged currencies (USDC received, USD owed), one per currency. */
  peg: (where: Where & { pair: string }): store.LedgerAccountSpec => ({
    ...where,
    kind: 'clearing',
    ref: `peg:${where.pair}`,
    normalSide: 'debit',
    tracksBalance: false,
    noOverdraft: false,
  }),
};

type Specs = typeof ledgerAccountSpecs;

/** The ledger account of each kind for a place, created on first use. */
export const ledgerAccounts = Object.fromEntries(
  Object.entries(ledgerAccountSpecs).map(([kind, make]) => [
    kind,
    (db: Queryable, where: never) =>
      store.ensureLedgerAccount(db, (make as (w: never) => store.LedgerAccountSpec)(where)),
  ]),
) as { [K in keyof Specs]: (db: Queryable, where: Parameters<Specs[K]>[0]) => Promise<LedgerAccountRef> };

/** Many ledger accounts at once (a pushed batch names a handful): answers them in the order asked. */
export function ensureLedgerAccounts<const S extends readonly store.LedgerAccountSpec[]>(
  db: Queryable,
  specs: S,
): Promise<store.RefsFor<S>> {
  return store.ensureLedgerAccounts(db, specs);
}

export async function naturalBalanceOf(db: Queryable, ledgerAccountId: string): Promise<AmountE8> {
  const account = await store.findLedgerAccount(db, ledgerAccountId);
  assert(account, `No ledger account ${ledgerAccountId}`);
  return naturalBalance(account.normalSide, readAmount(account.balance));
}

export type { LedgerAccountRef };

// Reads for the owner's screens: the day's income rows and the entries with their postings.
// Amounts leave as the records spell them; cursors are opaque (core/cursor.ts).

export type PageInput = { cursor?: string | undefined; limit?: number | undefined };

function keyOf(cursor: string | undefined, parts: number): string[] | undefined {
  if (cursor === undefined) return undefined;
  const key = decodeKeyCursor(cursor, parts);
  if (!key)
    throw new AppError('invalid_request', 'This cursor is not one this list gave out.', { field: 'cursor' });
  return key;
}

/** Income as the Income screen shows it: one row per income account, currency and day. */
export async function incomeRows(
  db: Queryable,
  spaceId: string,
  filter: PageInput & { ref?: string | undefined },
) {
  const limit = filter.limit ?? PAGE_SIZE;
  const after = keyOf(filter.cursor, 3) as [string, string, string] | undefined;
  const rows = await incomeDayRows(db, spaceId, { ref: filter.ref, after, limit });
  const page = pageByKey(rows, limit, (row) => [row.day, row.ref, row.currency]);
  return {
    items: page.items.map((row) => ({
      ref: row.ref,
      currency: row.currency,
      day: row.day,
      amount: formatAmount(naturalBalance('credit', readAmount(row.signed))),
      entries: Number(row.entries),
    })),
    next_cursor: page.next_cursor,
  };
}

/** The payments (and reversals) under one income row, newest first, each with its payer. */
export async function incomeRowEntries(
  db: Queryable,
  spaceId: string,
  row: { ref: string; currency: string; day: string },
  pageInput: PageInput,
) {
  const limit = pageInput.limit ?? PAGE_SIZE;
  const after = keyOf(pageInput.cursor, 2) as [string, string] | undefined;
  const rows = await store.incomeDayEntries(db, spaceId, row, { after, limit });
  const page = pageByKey(rows, limit, (entry) => [entry.created_at.toISOString(), entry.id]);
  return {
    items: page.items.map((entry) => ({
      entry_id: entry.id,
      amount: formatAmount(naturalBalance('credit', readAmount(entry.amount))),
      payer: entry.counterparty,
      origin: entry.origin,
      cause_type: entry.cause_type,
      memo: entry.memo,
      reverses_entry_id: entry.reverses_entry_id,
      created_at: entry.created_at.toISOString(),
    })),
    next_cursor: page.next_cursor,
  };
}

export type EntryFilter = PageInput & {
  /** Ledger accounts whose entries are wanted (a user account's assets); undefined for all. */
  ledgerAccountIds?: string[] | undefined;
  from?: string | undefined;
  to?: string | undefined;
};

/** Entries with their postings, newest filed first. */
export async function listEntriesWithPostings(db: Queryable, spaceId: string, filter: EntryFilter) {
  const limit = filter.limit ?? PAGE_SIZE;
  const after = keyOf(filter.cursor, 2) as [string, string] | undefined;
  const rows = await store.listEntries(db, spaceId, { ...filter, after, limit });
  const page = pageByKey(rows, limit, (entry) => [entry.created_at.toISOString(), entry.id]);
  return { items: await withPostings(db, spaceId, page.items), next_cursor: page.next_cursor };
}

/** One entry with its postings, or undefined when the space has no such entry. */
export async function entryWithPostings(db: Queryable, spaceId: string, entryId: string) {
  const entry = await store.findEntry(db, spaceId, entryId);
  return entry ? (await withPostings(db, spaceId, [entry]))[0] : undefined;
}

type EntryRecord = NonNullable<Awaited<ReturnType<typeof store.findEntry>>>;

async function withPostings(db: Queryable, spaceId: string, entries: EntryRecord[]) {
  const postings = await store.postingsForDisplay(
    db,
    spaceId,
    entries.map((entry) => entry.id),
  );
  return entries.map((entry) => ({
    id: entry.id,
    occurred_on: entry.occurred_on,
    origin: entry.origin,
    kind: entry.kind,
    cause_type: entry.cause_type,
    cause_id: entry.cause_id,
    counterparty: entry.counterparty,
    memo: entry.memo,
    reverses_entry_id: entry.reverses_entry_id,
    created_at: entry.created_at.toISOString(),
    postings: postings
      .filter((posting) => posting.entry_id === entry.id)
      .map((posting) => ({
        ledger_account_id: posting.ledger_account_id,
        account_kind: posting.kind,
        account_ref: posting.ref,
        currency: posting.currency,
        /** Signed: debits positive, credits negative. */
        amount: formatAmount(readAmount(posting.amount)),
      })),
  }));
}

/** The ledger accounts of a kind and ref (one per currency it ever held). */
export async function ledgerAccountIdsOf(
  db: Queryable,
  spaceId: string,
  kind: LedgerAccountKind,
  ref: string,
) {
  return (await store.findLedgerAccountByRef(db, spaceId, kind, ref)).map((row) => row.id);
}
