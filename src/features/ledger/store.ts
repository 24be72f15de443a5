import { randomUUID } from 'node:crypto';
import { type RawBuilder, type Selectable, sql } from 'kysely';
import { assert, defined } from '../../core/assert.ts';
import { jsonRecords, recordsJson } from '../../platform/db/bulk.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { CommittedRows, readBeforeAnyWrite } from '../../platform/db/lasting.ts';
import type { Rider } from '../../platform/db/rider.ts';
import type { LedgerAccountsTable } from '../../platform/db/schema.ts';
import { type LedgerAccountKind, type LedgerAccountRef, type NormalSide, naturalSign } from './domain.ts';

/** A signed SQL amount read in the account's natural direction (the domain's `naturalSign`). */
function naturalSql(normalSide: NormalSide, signed: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`${sql.lit(naturalSign(normalSide))} * (${signed})`;
}

/** The same, for a row's own `normal_side` column (checks over many accounts). */
const NATURAL_SIGN_OF_ROW = sql`(CASE normal_side WHEN 'debit' THEN ${sql.lit(naturalSign('debit'))} ELSE ${sql.lit(naturalSign('credit'))} END)`;

export type LedgerAccountSpec = {
  spaceId: string;
  kind: LedgerAccountKind;
  ref: string;
  currency: string;
  normalSide: NormalSide;
  tracksBalance: boolean;
  noOverdraft: boolean;
  at: Date;
};

type Row = Pick<
  Selectable<LedgerAccountsTable>,
  'id' | 'currency' | 'normal_side' | 'tracks_balance' | 'no_overdraft'
>;

const toRef = (row: Row): LedgerAccountRef => ({
  id: row.id,
  currency: row.currency,
  normalSide: row.normal_side,
  tracksBalance: row.tracks_balance,
  noOverdraft: row.no_overdraft,
});

// A ledger account's id, currency, side and flags never change and the row is never deleted:
// once read from a committed row it is kept by its unique key (see platform/db/lasting.ts).
const lastingAccounts = new CommittedRows<LedgerAccountRef>();

const specKey = (spec: { spaceId: string; kind: string; ref: string; currency: string }) =>
  `${spec.spaceId}|${spec.kind}|${spec.currency}|${spec.ref}`;

/** The ledger account for (space, kind, ref, currency), created on first use. */
export async function ensureLedgerAccount(db: Queryable, spec: LedgerAccountSpec): Promise<LedgerAccountRef> {
  const key = specKey(spec);
  const known = lastingAccounts.get(key);
  if (known) return known;
  const find = async () => {
    const row = await db
      .selectFrom('ledger_accounts')
      .select([
        'id',
        'currency',
        'normal_side',
        'tracks_balance',
        'no_overdraft',
        readBeforeAnyWrite.as('lasting'),
      ])
      .where('space_id', '=', spec.spaceId)
      .where('kind', '=', spec.kind)
      .where('ref', '=', spec.ref)
      .where('currency', '=', spec.currency)
      .executeTakeFirst();
    if (!row) return undefined;
    const ref = toRef(row);
    lastingAccounts.keep(key, ref, row.lasting);
    return ref;
  };
  const existing = await find();
  if (existing) return existing;
  await db
    .insertInto('ledger_accounts')
    .values({
      id: randomUUID(),
      space_id: spec.spaceId,
      kind: spec.kind,
      ref: spec.ref,
      currency: spec.currency,
      normal_side: spec.normalSide,
      tracks_balance: spec.tracksBalance,
      no_overdraft: spec.noOverdraft,
      created_at: spec.at,
    })
    .onConflict((conflict) => conflict.columns(['space_id', 'kind', 'ref', 'currency']).doNothing())
    .execute();
  return defined(await find(), 'the ledger account just ensured');
}

/** One ledger account per spec, in the specs' order: a tuple of specs answers a tuple of accounts. */
export type RefsFor<S extends readonly LedgerAccountSpec[]> = { -readonly [K in keyof S]: LedgerAccountRef };

/** Many ledger accounts, created on first use: one lookup, and one insert when some are new. */
export async function ensureLedgerAccounts<const S extends readonly LedgerAccountSpec[]>(
  db: Queryable,
  specs: S,
): Promise<RefsFor<S>> {
  // The answer has one account per spec, in order (accountsInOrder), which is what RefsFor says.
  return (await accountsInOrder(db, specs)) as RefsFor<S>;
}

async function accountsInOrder(
  db: Queryable,
  specs: readonly LedgerAccountSpec[],
): Promise<LedgerAccountRef[]> {
  const cached = specs.map((spec) => lastingAccounts.get(specKey(spec)));
  if (cached.every((ref) => ref !== undefined)) return cached;
  const wanted = [...new Map(specs.map((spec) => [specKey(spec), spec])).values()];
  const lookup = () =>
    sql<Row & { space_id: string; kind: string; ref: string; lasting: boolean }>`
      SELECT a.id, a.space_id, a.kind, a.ref, a.currency, a.normal_side, a.tracks_balance, a.no_overdraft,
        ${readBeforeAnyWrite} AS lasting
      FROM ${jsonRecords(
        wanted.map((spec) => ({
          space_id: spec.spaceId,
          kind: spec.kind,
          ref: spec.ref,
          currency: spec.currency,
        })),
        'w',
        'space_id uuid, kind text, ref text, currency text',
      )}
      JOIN ledger_accounts a ON a.space_id = w.space_id AND a.kind = w.kind AND a.ref = w.ref AND a.currency = w.currency`
      .execute(db)
      .then((result) => {
        const found = new Map<string, LedgerAccountRef>();
        for (const row of result.rows) {
          const key = specKey({ ...row, spaceId: row.space_id });
          const ref = toRef(row);
          found.set(key, ref);
          lastingAccounts.keep(key, ref, row.lasting);
        }
        return found;
      });
  let found = await lookup();
  const missing = wanted.filter((spec) => !found.has(specKey(spec)));
  if (missing.length > 0) {
    await db
      .insertInto('ledger_accounts')
      .values(
        missing.map((spec) => ({
          id: randomUUID(),
          space_id: spec.spaceId,
          kind: spec.kind,
          ref: spec.ref,
          currency: spec.currency,
          normal_side: spec.normalSide,
          tracks_balance: spec.tracksBalance,
          no_overdraft: spec.noOverdraft,
          created_at: spec.at,
        })),
      )
      .onConflict((conflict) => conflict.columns(['space_id', 'kind', 'ref', 'currency']).doNothing())
      .execute();
    found = await lookup();
  }
  return specs.map((spec) => defined(found.get(specKey(spec)), 'a ledger account just ensured'));
}

export async function findLedgerAccount(
  db: Queryable,
  id: string,
): Promise<(LedgerAccountRef & { balance: string }) | undefined> {
  const row = await db
    .selectFrom('ledger_accounts')
    .select(['id', 'currency', 'normal_side', 'tracks_balance', 'no_overdraft', 'balance'])
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? { ...toRef(row), balance: row.balance } : undefined;
}

/**
 * Adds `delta` to a tracked balance. With `guard`, the update happens only if the account stays
 * on the right side of zero, decided by the row lock the UPDATE takes: concurrent writers queue
 * on the row and each sees the balance the previous one left.
 */
export async function applyDelta(
  db: Queryable,
  account: LedgerAccountRef,
  delta: string,
  guard: boolean,
): Promise<string | undefined> {
  const natural = naturalSql(account.normalSide, sql`balance + ${delta}::numeric`);
  const result = await sql<{ balance: string }>`
    UPDATE ledger_accounts SET balance = balance + ${delta}::numeric
    WHERE id = ${account.id} ${guard ? sql`AND ${natural} >= 0` : sql``}
    RETURNING balance::text AS balance`.execute(db);
  return result.rows[0]?.balance;
}

/**
 * Adds many unguarded deltas in one statement. The rows are locked in id order (the order
 * balanceUpdates gives unguarded accounts one by one, so bulk and single filings queue rather
 * than deadlock), and the update moves only rows the lock has already taken: whatever order the
 * join runs in, no lock is ever taken out of that order.
 */
export async function applyDeltas(db: Queryable, deltas: { id: string; delta: string }[]) {
  if (deltas.length === 0) return;
  const ids = deltas.map((item) => item.id);
  await sql`
    WITH locked AS MATERIALIZED (
      SELECT id FROM ledger_accounts WHERE id = ANY(${ids}::uuid[]) ORDER BY id FOR UPDATE
    )
    UPDATE ledger_accounts a SET balance = a.balance + d.delta
    FROM locked l, ${jsonRecords(deltas, 'd', 'id uuid, delta numeric')}
    WHERE l.id = d.id AND a.id = l.id`.execute(db);
}

export type EntryInsert = {
  id: string;
  spaceId: string;
  origin: string;
  kind: string;
  occurredOn: string;
  causeType: string;
  causeId: string | null;
  counterparty: string;
  memo: string;
  reversesEntryId: string | null;
  at: Date;
};

export type PostingInsert = { accountId: string; currency: string; amount: string };

// Income arrivals: the pre-summed income days' inbox (income-days.ts settles and reads them).
/**
 * The step that records the income postings a statement files, given the name of the step
 * whose rows are those postings (ledger_postings' columns, as its RETURNING gives them).
 */
function incomeArrivalsStep(postings: string): RawBuilder<unknown> {
  const filed = sql.table(postings);
  return sql`INSERT INTO ledger_income_arrivals (space_id, entry_id, ledger_account_id, currency, day, amount)
    SELECT p.space_id, p.entry_id, p.ledger_account_id, p.currency, p.occurred_on, SUM(p.amount)
    FROM ${filed} p JOIN ledger_accounts a ON a.id = p.ledger_account_id
    WHERE a.kind = 'income'
    GROUP BY p.space_id, p.entry_id, p.ledger_account_id, p.currency, p.occurred_on`;
}

/** A row another feature writes in an entry's statement, from the `entry` step (see Rider). */
export type EntryRider = Rider;

const ENTRY_STEP = sql.id('entry');

function riderSteps(riders: EntryRider[]) {
  return sql.join(
    riders.map((rider, index) => sql`, ${sql.id(`rider_${index}`)} AS (${rider(ENTRY_STEP)})`),
    sql``,
  );
}

/**
 * A feature's guarded write that an entry depends on (a payment request moving from the state
 * its settlement read to the next one): a data-modifying statement with RETURNING, whose rows
 * gate the entry. Like a rider, its text must not depend on values.
 */
export type EntryCondition = RawBuilder<unknown>;

/** Runs a condition on its own (the several-balances path, in the caller's transaction). */
export async function meetsCondition(db: Queryable, condition: EntryCondition): Promise<boolean> {
  const result = await sql`WITH condition AS (${condition}) SELECT 1 AS met FROM condition`.execute(db);
  return result.rows.length > 0;
}

/** Writes riders for an entry already in the table (the path that moved several balances). */
export async function insertRiders(db: Queryable, entryId: string, riders: EntryRider[]) {
  for (const rider of riders) {
    await sql`WITH entry AS (SELECT id FROM ledger_entries WHERE id = ${entryId}::uuid)
      ${rider(ENTRY_STEP)}`.execute(db);
  }
}

/**
 * One balance move and the entry it belongs to, in one statement: the move is an UPDATE of one
 * ledger account (with `guard`, only if the account stays on its right side of zero, decided
 * under the row lock the UPDATE takes), and the entry and its postings are inserted only from
 * the row the UPDATE returned. A refused move therefore writes nothing at all, and the caller's
 * transaction needs no savepoint. The text never depends on the number of postings (they travel
 * as arrays), so the statement is prepared once per connection. With a `condition`, its write
 * comes first and the move happens only if it returned a row. Answers the account's new
 * balance, or undefined when the guard (or the condition) refused.
 */
export async function moveAndInsertEntry(
  db: Queryable,
  move: { account: LedgerAccountRef; delta: string; guard: boolean },
  entry: EntryInsert,
  postings: PostingInsert[],
  riders: EntryRider[] = [],
  condition?: EntryCondition,
): Promise<string | undefined> {
  const guard = move.guard
    ? sql`AND ${naturalSql(move.account.normalSide, sql`balance + ${move.delta}::numeric`)} >= 0`
    : sql``;
  const first = condition ? sql`condition AS (${condition}), ` : sql``;
  const gate = condition ? sql`AND EXISTS (SELECT 1 FROM condition)` : sql``;
  const result = await sql<{ balance: string }>`
    WITH ${first}moved AS (
      UPDATE ledger_accounts SET balance = balance + ${move.delta}::numeric
      WHERE id = ${move.account.id} ${guard} ${gate}
      RETURNING balance
    ), entry AS (
      INSERT INTO ledger_entries (id, space_id, origin, kind, occurred_on, cause_type, cause_id, counterparty,
        memo, reverses_entry_id, created_at)
      SELECT ${entry.id}::uuid, ${entry.spaceId}::uuid, ${entry.origin}, ${entry.kind}, ${entry.occurredOn}::date,
        ${entry.causeType}, ${entry.causeId}::uuid, ${entry.counterparty}, ${entry.memo},
        ${entry.reversesEntryId}::uuid, ${entry.at}::timestamptz
      FROM moved
      RETURNING id, space_id, occurred_on
    ), postings AS (
      INSERT INTO ledger_postings (id, space_id, entry_id, ledger_account_id, currency, amount, occurred_on)
      SELECT p.id, e.space_id, e.id, p.account_id, p.currency, p.amount, e.occurred_on
      FROM entry e,
        unnest(${postings.map(() => randomUUID())}::uuid[], ${postings.map((p) => p.accountId)}::uuid[],
          ${postings.map((p) => p.currency)}::text[], ${postings.map((p) => p.amount)}::numeric[])
          AS p(id, account_id, currency, amount)
      RETURNING space_id, entry_id, ledger_account_id, currency, amount, occurred_on
    ), arrivals AS (${incomeArrivalsStep('postings')})${riderSteps(riders)}
    SELECT balance::text AS balance FROM moved`.execute(db);
  return result.rows[0]?.balance;
}

export async function insertEntry(db: Queryable, entry: EntryInsert, postings: PostingInsert[]) {
  // One statement: the entry, its postings and their income arrivals; the postings' checks run
  // when it ends.
  await sql`
    WITH entry AS (
      INSERT INTO ledger_entries (id, space_id, origin, kind, occurred_on, cause_type, cause_id, counterparty,
        memo, reverses_entry_id, created_at)
      VALUES (${entry.id}::uuid, ${entry.spaceId}::uuid, ${entry.origin}, ${entry.kind}, ${entry.occurredOn}::date,
        ${entry.causeType}, ${entry.causeId}::uuid, ${entry.counterparty}, ${entry.memo},
        ${entry.reversesEntryId}::uuid, ${entry.at}::timestamptz)
    ), postings AS (
      INSERT INTO ledger_postings (id, space_id, entry_id, ledger_account_id, currency, amount, occurred_on)
      SELECT p.id, ${entry.spaceId}::uuid, ${entry.id}::uuid, p.account_id, p.currency, p.amount,
        ${entry.occurredOn}::date
      FROM unnest(${postings.map(() => randomUUID())}::uuid[], ${postings.map((p) => p.accountId)}::uuid[],
          ${postings.map((p) => p.currency)}::text[], ${postings.map((p) => p.amount)}::numeric[])
          AS p(id, account_id, currency, amount)
      RETURNING space_id, entry_id, ledger_account_id, currency, amount, occurred_on
    )
    ${incomeArrivalsStep('postings')}`.execute(db);
}

export type EntryRow = {
  id: string;
  spaceId: string;
  origin: string;
  kind: string;
  occurredOn: string;
  causeType: string;
  causeId: string | null;
  counterparty: string;
  memo: string;
  reversesEntryId: string | null;
  postings: { accountId: string; currency: string; amount: string }[];
};

/** Each distinct value once, and the index of every value in that list (1-based, as SQL arrays). */
function dictionary() {
  const index = new Map<string, number>();
  const values: string[] = [];
  return {
    values,
    of(value: string): number {
      let at = index.get(value);
      if (at === undefined) {
        values.push(value);
        at = values.length;
        index.set(value, at);
      }
      return at;
    },
  };
}

/**
 * Many entries and all their postings as one JSON document (see platform/db/bulk.ts), for
 * `insertEntriesDocument`. A batch names a handful of spaces and ledger accounts hundreds of
 * times, so those go in once, as arrays, and each row names them by position: PostgreSQL then
 * parses a few ids instead of thousands, and the document is about half the size. An entry's row
 * ends with its postings as [position, amount, posting id] triples, the position naming a
 * (ledger account, currency) pair as the posting gave it. Posting ids are made here: PostgreSQL's
 * gen_random_uuid() cost about 2 µs a posting on our test machine, Node's randomUUID a fraction
 * of that. Pure apart from those ids, so it can be written while the database works.
 */
export function entriesDocument(entries: EntryRow[]): EntriesDocument {
  const spaces = dictionary();
  // Keyed by account and currency together, so a posting's currency reaches the database as given.
  const accounts = dictionary();
  const accountIds: string[] = [];
  const currencies: string[] = [];
  const document = recordsJson(
    entries.map((e) => [
      e.id,
      spaces.of(e.spaceId),
      e.origin,
      e.kind,
      e.occurredOn,
      e.causeType,
      e.causeId,
      e.counterparty,
      e.memo,
      e.reversesEntryId,
      e.postings.flatMap((posting) => {
        const position = accounts.of(`${posting.accountId} ${posting.currency}`);
        accountIds[position - 1] = posting.accountId;
        currencies[position - 1] = posting.currency;
        return [position, posting.amount, randomUUID()];
      }),
    ]),
  );
  return { count: entries.length, document, spaceIds: spaces.values, accountIds, currencies };
}

export type EntriesDocument = {
  count: number;
  document: string;
  spaceIds: string[];
  accountIds: string[];
  currencies: string[];
};

/** Files the entries of an `entriesDocument` and all their postings, at one moment, in one statement. */
export async function insertEntriesDocument(db: Queryable, entries: EntriesDocument, at: Date) {
  if (entries.count === 0) return;
  const { document, spaceIds, accountIds, currencies } = entries;
  await sql`
    WITH doc AS MATERIALIZED (SELECT t FROM jsonb_array_elements(${document}::jsonb) AS t),
    entries AS (
      INSERT INTO ledger_entries (id, space_id, origin, kind, occurred_on, cause_type, cause_id, counterparty, memo, reverses_entry_id, created_at)
      SELECT (t->>0)::uuid, (${spaceIds}::uuid[])[(t->>1)::int], t->>2, t->>3, (t->>4)::date, t->>5,
        (t->>6)::uuid, t->>7, t->>8, (t->>9)::uuid, ${at}::timestamptz
      FROM doc
    ),
    postings AS (
      INSERT INTO ledger_postings (id, space_id, entry_id, ledger_account_id, currency, amount, occurred_on)
      SELECT (t->10->>(3 * k + 2))::uuid, (${spaceIds}::uuid[])[(t->>1)::int], (t->>0)::uuid,
        (${accountIds}::uuid[])[(t->10->>(3 * k))::int], (${currencies}::text[])[(t->10->>(3 * k))::int],
        (t->10->>(3 * k + 1))::numeric, (t->>4)::date
      FROM doc, generate_series(0, jsonb_array_length(t->10) / 3 - 1) AS k
      RETURNING space_id, entry_id, ledger_account_id, currency, amount, occurred_on
    )
    ${incomeArrivalsStep('postings')}`.execute(db);
}

/** The postings of many entries, with their accounts, for reversing them. */
export function postingsOfEntries(db: Queryable, spaceId: string, entryIds: string[]) {
  if (entryIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('ledger_postings')
    .innerJoin('ledger_accounts', 'ledger_accounts.id', 'ledger_postings.ledger_account_id')
    .innerJoin('ledger_entries', 'ledger_entries.id', 'ledger_postings.entry_id')
    .select([
      'ledger_postings.entry_id',
      'ledger_accounts.id',
      'ledger_accounts.currency',
      'ledger_accounts.normal_side',
      'ledger_accounts.tracks_balance',
      'ledger_accounts.no_overdraft',
      'ledger_postings.amount',
      'ledger_entries.origin',
      'ledger_entries.kind',
      'ledger_entries.occurred_on',
      'ledger_entries.counterparty',
    ])
    .where('ledger_postings.space_id', '=', spaceId)
    .where('ledger_postings.entry_id', 'in', entryIds)
    .execute()
    .then((rows) => rows.map((row) => ({ ...row, account: toRef(row) })));
}

export function findEntry(db: Queryable, spaceId: string, entryId: string) {
  return db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('id', '=', entryId)
    .executeTakeFirst();
}

// Reads for `tollbook ledger check` (check.ts): each walks an index in key order, a bounded
// batch at a time (the postings through one cursor), so the check's memory does not grow with
// the book.

/** The check's scope: one book (by its id) or every book. */
function inScope(spaceId: string | undefined, column: string) {
  return spaceId === undefined ? sql`true` : sql`${sql.ref(column)} = ${spaceId}`;
}

/** The check's cursor: declared in its transaction, closed by it (and by the transaction's end). */
const ENTRY_POSTINGS_CURSOR = sql.id('ledger_check_entry_postings');

/**
 * Declares the check's one read of the postings: every entry of the scope in key order
 * (ledger_entries' primary key, or its (space_id, id) key for one book), each with its postings
 * in key order (ledger_postings' primary key), a row per posting; an entry without postings
 * comes as one row whose posting columns are null. Only the columns the rules read are sent:
 * the amount as its decimal text, the day as its ISO text. Rows are then taken with
 * `nextEntryPostings`; the statement is planned once and runs once, in the caller's snapshot.
 */
export async function openEntryPostings(db: Queryable, spaceId: string | undefined) {
  await sql`
    DECLARE ${ENTRY_POSTINGS_CURSOR} NO SCROLL CURSOR FOR
    SELECT e.id AS entry_id, p.ledger_account_id, p.currency, p.amount::text AS amount,
      p.occurred_on::text AS day
    FROM ledger_entries e LEFT JOIN ledger_postings p ON p.entry_id = e.id
    WHERE ${inScope(spaceId, 'e.space_id')}
    ORDER BY e.id, p.id`.execute(db);
}

export type EntryPostingRow = {
  entry_id: string;
  ledger_account_id: string | null;
  currency: string | null;
  amount: string | null;
  day: string | null;
};

/** The next `count` rows of the check's read (fewer at its end). FETCH takes its count as a literal. */
export async function nextEntryPostings(db: Queryable, count: number): Promise<EntryPostingRow[]> {
  assert(Number.isSafeInteger(count) && count > 0, `A batch is a positive number of rows, not ${count}`);
  const result = await sql<EntryPostingRow>`
    FETCH FORWARD ${sql.lit(count)} FROM ${ENTRY_POSTINGS_CURSOR}`.execute(db);
  return result.rows;
}

export async function closeEntryPostings(db: Queryable) {
  await sql`CLOSE ${ENTRY_POSTINGS_CURSOR}`.execute(db);
}

/**
 * The next `limit` ledger accounts in key order after `after` whose postings the check sums:
 * those that keep a balance (to compare it) and income accounts (for their days).
 */
export async function summedAccountsAfter(
  db: Queryable,
  spaceId: string | undefined,
  after: string | undefined,
  limit: number,
) {
  const past = after === undefined ? sql`` : sql`AND id > ${after}::uuid`;
  const result = await sql<{
    id: string;
    space_id: string;
    kind: LedgerAccountKind;
    tracks_balance: boolean;
    balance: string;
  }>`
    SELECT id, space_id, kind, tracks_balance, balance::text AS balance FROM ledger_accounts
    WHERE (tracks_balance OR kind = 'income') AND ${inScope(spaceId, 'space_id')} ${past}
    ORDER BY id LIMIT ${limit}`.execute(db);
  return result.rows;
}

/** Guarded accounts whose balance is below zero. */
export async function overdrawnAccounts(db: Queryable, spaceId: string | undefined) {
  const result = await sql<{ id: string; balance: string }>`
    SELECT id, balance::text AS balance FROM ledger_accounts WHERE no_overdraft AND ${inScope(spaceId, 'space_id')}
    AND ${NATURAL_SIGN_OF_ROW} * balance < 0`.execute(db);
  return result.rows;
}

// Reads for the owner's screens (Income, Ledger). Newest first, paged by keyset cursors.

/** The entries that made one income row: each payment (or reversal) with its payer. */
export function incomeDayEntries(
  db: Queryable,
  spaceId: string,
  row: { ref: string; currency: string; day: string },
  page: { after?: [string, string] | undefined; limit: number },
) {
  let query = db
    .selectFrom('ledger_postings')
    .innerJoin('ledger_accounts', 'ledger_accounts.id', 'ledger_postings.ledger_account_id')
    .innerJoin('ledger_entries', 'ledger_entries.id', 'ledger_postings.entry_id')
    .select([
      'ledger_entries.id',
      'ledger_entries.origin',
      'ledger_entries.cause_type',
      'ledger_entries.counterparty',
      'ledger_entries.memo',
      'ledger_entries.reverses_entry_id',
      'ledger_entries.created_at',
      'ledger_postings.amount',
    ])
    .where('ledger_accounts.space_id', '=', spaceId)
    .where('ledger_accounts.kind', '=', 'income')
    .where('ledger_accounts.ref', '=', row.ref)
    .where('ledger_postings.currency', '=', row.currency)
    .where('ledger_postings.occurred_on', '=', row.day)
    .orderBy('ledger_entries.created_at', 'desc')
    .orderBy('ledger_entries.id', 'desc')
    .limit(page.limit + 1);
  const after = page.after;
  if (after)
    query = query.where(
      sql<boolean>`(ledger_entries.created_at, ledger_entries.id) < (${after[0]}::timestamptz, ${after[1]}::uuid)`,
    );
  return query.execute();
}

/**
 * Entries newest filed first, optionally those touching one ledger account and those that
 * occurred within [from, to]; `after` is the (created_at, id) of the previous page's last.
 */
export function listEntries(
  db: Queryable,
  spaceId: string,
  filter: {
    ledgerAccountIds?: string[] | undefined;
    from?: string | undefined;
    to?: string | undefined;
    after?: [string, string] | undefined;
    limit: number;
  },
) {
  let query = db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('space_id', '=', spaceId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit + 1);
  if (filter.from !== undefined) query = query.where('occurred_on', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('occurred_on', '<=', filter.to);
  const accountIds = filter.ledgerAccountIds;
  if (accountIds !== undefined) {
    if (accountIds.length === 0) return Promise.resolve([]);
    query = query.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('ledger_postings')
          .select('ledger_postings.id')
          .whereRef('ledger_postings.entry_id', '=', 'ledger_entries.id')
          .where('ledger_postings.ledger_account_id', 'in', accountIds),
      ),
    );
  }
  const after = filter.after;
  if (after)
    query = query.where(sql<boolean>`(created_at, id) < (${after[0]}::timestamptz, ${after[1]}::uuid)`);
  return query.execute();
}

/** The postings of entries, each with the kind and ref of its ledger account, for display. */
export function postingsForDisplay(db: Queryable, spaceId: string, entryIds: string[]) {
  if (entryIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('ledger_postings')
    .innerJoin('ledger_accounts', 'ledger_accounts.id', 'ledger_postings.ledger_account_id')
    .select([
      'ledger_postings.id',
      'ledger_postings.entry_id',
      'ledger_postings.amount',
      'ledger_postings.currency',
      'ledger_accounts.id as ledger_account_id',
      'ledger_accounts.kind',
      'ledger_accounts.ref',
      'ledger_accounts.normal_side',
    ])
    .where('ledger_postings.space_id', '=', spaceId)
    .where('ledger_postings.entry_id', 'in', entryIds)
    .orderBy('ledger_postings.entry_id')
    .orderBy('ledger_postings.amount', 'desc')
    .execute();
}

/** The ledger account of a kind and ref in a space, if it was ever used. */
export function findLedgerAccountByRef(db: Queryable, spaceId: string, kind: LedgerAccountKind, ref: string) {
  return db
    .selectFrom('ledger_accounts')
    .select(['id', 'currency'])
    .where('space_id', '=', spaceId)
    .where('kind', '=', kind)
    .where('ref', '=', ref)
    .execute();
}
