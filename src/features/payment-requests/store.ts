import { type RawBuilder, type Selectable, sql } from 'kysely';
import { untilShort } from '../../platform/db/batches.ts';
import { compiledOnce, type QueryArg, writtenCount } from '../../platform/db/compiled-once.ts';
import type { Queryable } from '../../platform/db/database.ts';
import type { Rider } from '../../platform/db/rider.ts';
import type { PaymentRequestsTable, SettlementsTable } from '../../platform/db/schema.ts';

export type RequestRow = Selectable<PaymentRequestsTable>;

/** The columns a request's record shows (lists read only these). */
const SHOWN = [
  'id',
  'token',
  'amount',
  'amount_due',
  'amount_received',
  'currency',
  'status',
  'memo',
  'resource_id',
  'expires_at',
  'created_at',
] as const;
export type ShownRow = Pick<RequestRow, (typeof SHOWN)[number]>;

export async function insertRequest(
  db: Queryable,
  row: Omit<RequestRow, 'amount_received' | 'paid_at' | 'cancelled_at'>,
) {
  await db.insertInto('payment_requests').values(row).execute();
}

export function findByToken(db: Queryable, token: string): Promise<RequestRow | undefined> {
  return db.selectFrom('payment_requests').selectAll().where('token', '=', token).executeTakeFirst();
}

export function findInSpaceByToken(
  db: Queryable,
  spaceId: string,
  token: string,
): Promise<RequestRow | undefined> {
  return db
    .selectFrom('payment_requests')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('token', '=', token)
    .executeTakeFirst();
}

/** Locks the request for the rest of the transaction: settlements of one request queue here. */
export function lockRequest(db: Queryable, spaceId: string, id: string): Promise<RequestRow | undefined> {
  return db
    .selectFrom('payment_requests')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export async function recordReceipt(
  db: Queryable,
  id: string,
  received: string,
  status: RequestRow['status'],
  paidAt: Date | null,
) {
  await db
    .updateTable('payment_requests')
    .set({ amount_received: received, status, paid_at: paidAt })
    .where('id', '=', id)
    .execute();
}

export type SettlementRow = Pick<
  Selectable<SettlementsTable>,
  | 'id'
  | 'space_id'
  | 'payment_request_id'
  | 'rail'
  | 'reference'
  | 'amount'
  | 'currency'
  | 'payer'
  | 'entry_id'
  | 'settled_at'
  | 'matched_by'
>;

export function findSettlement(
  db: Queryable,
  spaceId: string,
  rail: SettlementRow['rail'],
  reference: string,
): Promise<SettlementRow | undefined> {
  return db
    .selectFrom('settlements')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('rail', '=', rail)
    .where('reference', '=', reference)
    .executeTakeFirst();
}

export async function insertSettlement(db: Queryable, row: SettlementRow) {
  await db.insertInto('settlements').values(row).execute();
}

export type Receipt = { received: string; status: RequestRow['status']; paidAt: Date | null };

/** The settlement's row, written in its ledger entry's own statement (and only if the entry is). */
export function settlementRider(row: SettlementRow): Rider {
  return (entry) => sql`
    INSERT INTO settlements (id, space_id, payment_request_id, rail, reference, amount, currency, payer,
      entry_id, settled_at, matched_by)
    SELECT ${row.id}::uuid, ${row.space_id}::uuid, ${row.payment_request_id}::uuid, ${row.rail}::text,
      ${row.reference}::text, ${row.amount}::numeric, ${row.currency}::text, ${row.payer}::text,
      ${entry}.id, ${row.settled_at}::timestamptz, ${row.matched_by}::text
    FROM ${entry}`;
}

/** The receipt a settlement makes on its request (locked by the caller), in the entry's statement. */
export function receiptRider(requestId: string, receipt: Receipt): Rider {
  return (entry) => sql`
    UPDATE payment_requests SET amount_received = ${receipt.received}::numeric, status = ${receipt.status}::text,
      paid_at = ${receipt.paidAt}::timestamptz
    FROM ${entry}
    WHERE payment_requests.id = ${requestId}::uuid`;
}

/**
 * The same receipt as the condition of the settlement's entry: the request moves only if it is
 * still in the state the settlement was computed from (its received amount, status and paid
 * time: every write to a request changes one of them). Decided under the row lock the UPDATE takes, so a
 * concurrent settlement either committed first (the condition fails and the caller settles
 * again under the lock) or waits for this one.
 */
export function receiptIfUnchanged(seen: RequestRow, receipt: Receipt): RawBuilder<unknown> {
  return sql`
    UPDATE payment_requests SET amount_received = ${receipt.received}::numeric, status = ${receipt.status}::text,
      paid_at = ${receipt.paidAt}::timestamptz
    WHERE space_id = ${seen.space_id}::uuid AND id = ${seen.id}::uuid
      AND amount_received = ${seen.amount_received}::numeric AND status = ${seen.status}::text
      AND paid_at IS NOT DISTINCT FROM ${seen.paid_at}::timestamptz
    RETURNING id`;
}

/** A request's columns the open sums read (open-sums.ts). */
export type OpenRow = Pick<
  RequestRow,
  'id' | 'space_id' | 'currency' | 'status' | 'amount_due' | 'amount_received'
>;

/** What a lapse returns of each request it cancelled. */
const LAPSED = sql`id, space_id, currency, status, amount_due::text AS amount_due, amount_received::text AS amount_received`;

/**
 * Moves lapsed active requests to cancelled, a bounded batch at a time, and answers them; safe
 * in many processes.
 */
export async function lapseDue(db: Queryable, now: Date, limit: number): Promise<OpenRow[]> {
  const result = await sql<OpenRow>`
    UPDATE payment_requests SET status = 'cancelled', cancelled_at = ${now}
    WHERE id IN (
      SELECT id FROM payment_requests WHERE status = 'active' AND expires_at <= ${now}
      ORDER BY expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
    )
    RETURNING ${LAPSED}`.execute(db);
  return result.rows;
}

/** A watched account's requests that can still take money, oldest first (the order transfers fill them). */
export function activeForAccount(db: Queryable, spaceId: string, accountId: string, now: Date) {
  return db
    .selectFrom('payment_requests')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('account_id', '=', accountId)
    .where('status', '=', 'active')
    .where('expires_at', '>', now)
    .orderBy('created_at')
    .orderBy('id')
    .execute() as Promise<RequestRow[]>;
}

/** Settlements of one rail whose reference starts with `prefix` (one chain transfer may fill several). */
export function settlementsByPrefix(
  db: Queryable,
  spaceId: string,
  rail: SettlementRow['rail'],
  prefix: string,
) {
  return db
    .selectFrom('settlements')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('rail', '=', rail)
    .where((eb) =>
      eb.or([
        eb('reference', '=', prefix),
        eb('reference', 'like', `${prefix.replace(/[%_\\]/g, '\\$&')}:%`),
      ]),
    )
    .where('reversed_at', 'is', null)
    .execute();
}

export async function markSettlementReversed(db: Queryable, id: string, at: Date) {
  await db.updateTable('settlements').set({ reversed_at: at }).where('id', '=', id).execute();
}

/** The invoice's request that can still take money, if any (the page reuses it). */
export function activeForInvoice(db: Queryable, spaceId: string, invoiceId: string, now: Date) {
  return db
    .selectFrom('payment_requests')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('invoice_id', '=', invoiceId)
    .where('status', '=', 'active')
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .executeTakeFirst() as Promise<RequestRow | undefined>;
}

/**
 * Holds the account for the rest of the transaction, so two mints on one address cannot pick
 * the same asked amount. NO KEY UPDATE: rows that merely reference the account are not blocked.
 */
export async function lockAccountForMint(db: Queryable, spaceId: string, accountId: string) {
  await sql`SELECT id FROM accounts WHERE space_id = ${spaceId} AND id = ${accountId} FOR NO KEY UPDATE`.execute(
    db,
  );
}

/**
 * The first rung of the tag ladder (`top`, `top - step`, ... for `rungs` rungs) that no open
 * request of the account (active and in time) asks for; null when all are taken. Each rung is one
 * probe of the open-dues index (account, amount_due), and the walk stops at the first free rung,
 * so a mint reads the requests asking for its price and the rungs just below it, never the
 * account's other open requests.
 */
export async function firstFreeAsk(
  db: Queryable,
  accountId: string,
  ladder: { top: string; step: string; rungs: number },
  now: Date,
): Promise<string | null> {
  const result = await sql<{ due: string }>`
    WITH RECURSIVE rung (n, due, taken) AS (
      SELECT 0, ${ladder.top}::numeric, EXISTS (
        SELECT 1 FROM payment_requests
        WHERE account_id = ${accountId}::uuid AND status = 'active'
          AND amount_due = ${ladder.top}::numeric AND expires_at > ${now}::timestamptz)
      UNION ALL
      SELECT rung.n + 1, rung.due - ${ladder.step}::numeric, EXISTS (
        SELECT 1 FROM payment_requests
        WHERE account_id = ${accountId}::uuid AND status = 'active'
          AND amount_due = rung.due - ${ladder.step}::numeric AND expires_at > ${now}::timestamptz)
      FROM rung WHERE rung.taken AND rung.n + 1 < ${ladder.rungs}::int
    )
    SELECT due::text AS due FROM rung WHERE NOT taken`.execute(db);
  return result.rows[0]?.due ?? null;
}

/**
 * A lapsed request (active, past its deadline) asking for `due` on the account is cancelled, as
 * the lapse job would: the mint about to ask for that amount takes its place under the unique
 * index on open asks.
 */
export async function lapseAsk(db: Queryable, accountId: string, due: string, now: Date): Promise<OpenRow[]> {
  const result = await sql<OpenRow>`
    UPDATE payment_requests SET status = 'cancelled', cancelled_at = ${now}
    WHERE account_id = ${accountId}::uuid AND status = 'active'
      AND amount_due = ${due}::numeric AND expires_at <= ${now}::timestamptz
    RETURNING ${LAPSED}`.execute(db);
  return result.rows;
}

/** An open top-up request of one client credit on one account, newest first: reused by charges. */
export function openTopUp(
  db: Queryable,
  spaceId: string,
  clientCreditId: string,
  accountId: string,
  now: Date,
) {
  return db
    .selectFrom('payment_requests')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('client_credit_id', '=', clientCreditId)
    .where('account_id', '=', accountId)
    .where('purpose', '=', 'top_up')
    .where('status', '=', 'active')
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst() as Promise<RequestRow | undefined>;
}

export type RequestListFilter = {
  /** The status a reader sees: a lapsed active request is listed as cancelled. */
  status?: 'active' | 'paid' | 'cancelled' | undefined;
  before?: { at: Date; id: string } | undefined;
  now: Date;
  limit: number;
};

type ListArgs = { spaceId: string; now: Date; beforeAt: Date | null; beforeId: string | null };
type ListShape = `${'all' | 'active' | 'paid' | 'cancelled'}:${'first' | 'next'}:${number}`;

/**
 * The list's eight shapes (a status filter or none, a cursor or none), each compiled once, with
 * the page's row count written into the text (callers ask for one size, a page and one more).
 */
const listQuery = compiledOnce((db: Queryable, arg: QueryArg<ListArgs>, shape: ListShape) => {
  const [status, page, limit] = shape.split(':');
  let query = db.selectFrom('payment_requests').select(SHOWN).where('space_id', '=', arg('spaceId'));
  if (status === 'paid') query = query.where('status', '=', 'paid');
  if (status === 'active') query = query.where('status', '=', 'active').where('expires_at', '>', arg('now'));
  if (status === 'cancelled') {
    query = query.where((eb) =>
      eb.or([
        eb('status', '=', 'cancelled'),
        eb.and([eb('status', '=', 'active'), eb('expires_at', '<=', arg('now'))]),
      ]),
    );
  }
  if (page === 'next') {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', arg('beforeAt')),
        eb.and([eb('created_at', '=', arg('beforeAt')), eb('id', '<', arg('beforeId'))]),
      ]),
    );
  }
  return query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(writtenCount(Number(limit)));
});

/** A space's requests, newest first, one page from a (created_at, id) cursor. */
export function listRequests(db: Queryable, spaceId: string, filter: RequestListFilter): Promise<ShownRow[]> {
  const { before, now, limit } = filter;
  const shape: ListShape = `${filter.status ?? 'all'}:${before ? 'next' : 'first'}:${limit}`;
  const args = { spaceId, now, beforeAt: before?.at ?? null, beforeId: before?.id ?? null };
  return listQuery(db, args, shape);
}

/** The request lapses now (the caller holds its row lock): cancelled, its deadline the moment of cancelling. */
export async function lapseNow(db: Queryable, spaceId: string, id: string, now: Date): Promise<RequestRow> {
  return db
    .updateTable('payment_requests')
    .set({
      status: 'cancelled',
      cancelled_at: now,
      expires_at: sql<Date>`LEAST(expires_at, ${now}::timestamptz)`,
    })
    .where('space_id', '=', spaceId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** One write's change to its book's open sums (see open-sums.ts). */
export type OpenArrival = {
  id: string;
  space_id: string;
  payment_request_id: string;
  currency: string;
  requests: number;
  open: string;
};

/** Files changes to the open sums, in the caller's transaction; one statement for any number. */
export async function insertOpenArrivals(db: Queryable, arrivals: OpenArrival[]) {
  if (arrivals.length === 0) return;
  await sql`
    INSERT INTO payment_request_open_arrivals (space_id, id, payment_request_id, currency, requests, open)
    SELECT * FROM unnest(${arrivals.map((a) => a.space_id)}::uuid[], ${arrivals.map((a) => a.id)}::uuid[],
      ${arrivals.map((a) => a.payment_request_id)}::uuid[], ${arrivals.map((a) => a.currency)}::text[],
      ${arrivals.map((a) => a.requests)}::int[], ${arrivals.map((a) => a.open)}::numeric[])`.execute(db);
}

/** A change to the open sums as a rider of a ledger entry: filed exactly when the entry is. */
export function openArrivalRider(arrival: OpenArrival): Rider {
  return (entry) => sql`
    INSERT INTO payment_request_open_arrivals (space_id, id, payment_request_id, currency, requests, open)
    SELECT ${arrival.space_id}::uuid, ${arrival.id}::uuid, ${arrival.payment_request_id}::uuid,
      ${arrival.currency}::text, ${arrival.requests}::int, ${arrival.open}::numeric
    FROM ${entry}`;
}

/** How many arrivals one settling statement moves. */
export const SETTLE_BATCH = 5_000;

/**
 * Moves up to `batch` arrivals (any books) into their totals, in one statement; answers how many
 * it moved. Safe in several processes at once: each claims its rows with SKIP LOCKED.
 */
export async function settleOpenSums(db: Queryable, batch = SETTLE_BATCH): Promise<number> {
  const result = await sql<{ moved: string }>`
    WITH claimed AS (
      SELECT space_id, id FROM payment_request_open_arrivals LIMIT ${batch} FOR UPDATE SKIP LOCKED
    ), moved AS (
      DELETE FROM payment_request_open_arrivals x USING claimed c
      WHERE x.space_id = c.space_id AND x.id = c.id
      RETURNING x.space_id, x.currency, x.requests, x.open
    ), added AS (
      INSERT INTO payment_request_open_totals (space_id, currency, requests, open)
      SELECT space_id, currency, SUM(requests), SUM(open) FROM moved
      GROUP BY space_id, currency
      ON CONFLICT (space_id, currency) DO UPDATE
        SET requests = payment_request_open_totals.requests + excluded.requests,
          open = payment_request_open_totals.open + excluded.open
    )
    SELECT COUNT(*)::text AS moved FROM moved`.execute(db);
  return Number(result.rows[0]?.moved ?? 0);
}

/** Settles every arrival there is, batch after batch, until a batch comes back short. */
export function settleAllOpenSums(db: Queryable, batch = SETTLE_BATCH): Promise<number> {
  return untilShort(batch, (size) => settleOpenSums(db, size));
}

/**
 * A book's open sums per currency (settled and arriving, summed) and, in the same statement, its
 * active requests already past their deadline (the lapse job's backlog, a short range of
 * payment_requests_lapsed_open_idx however many requests are open), for the caller to take off.
 */
export async function openSumRows(db: Queryable, spaceId: string, now: Date) {
  const result = await sql<
    | { currency: string; requests: string; open: string; amount_due: null; amount_received: null }
    | { currency: string; requests: null; open: null; amount_due: string; amount_received: string }
  >`
    SELECT currency, SUM(requests)::text AS requests, SUM(open)::text AS open,
      NULL AS amount_due, NULL AS amount_received
    FROM (
      SELECT currency, requests, open FROM payment_request_open_totals WHERE space_id = ${spaceId}
      UNION ALL
      SELECT currency, requests, open FROM payment_request_open_arrivals WHERE space_id = ${spaceId}
    ) sums
    GROUP BY currency
    UNION ALL
    SELECT currency, NULL, NULL, amount_due::text, amount_received::text FROM payment_requests
    WHERE space_id = ${spaceId} AND status = 'active' AND expires_at <= ${now}`.execute(db);
  return result.rows;
}
