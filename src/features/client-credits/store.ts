import { type Selectable, sql } from 'kysely';
import { defined } from '../../core/assert.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { readBeforeAnyWrite } from '../../platform/db/lasting.ts';
import type { Rider } from '../../platform/db/rider.ts';
import type { ClientCreditAdjustmentsTable, ClientCreditsTable } from '../../platform/db/schema.ts';

export type ClientCreditRow = Selectable<ClientCreditsTable>;

export async function findByRef(db: Queryable, spaceId: string, clientRef: string, currency: string) {
  return db
    .selectFrom('client_credits')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('client_ref', '=', clientRef)
    .where('currency', '=', currency)
    .executeTakeFirst();
}

/** The fields of a client credit that never change, and whether they were read before any write. */
export async function findLastingByRef(db: Queryable, spaceId: string, clientRef: string, currency: string) {
  return db
    .selectFrom('client_credits')
    .select([
      'id',
      'space_id',
      'client_ref',
      'currency',
      'ledger_account_id',
      'page_token',
      readBeforeAnyWrite.as('lasting'),
    ])
    .where('space_id', '=', spaceId)
    .where('client_ref', '=', clientRef)
    .where('currency', '=', currency)
    .executeTakeFirst();
}

/** Inserts unless a concurrent request already did; either way the one row is returned. */
export async function insertOrGet(db: Queryable, row: ClientCreditRow): Promise<ClientCreditRow> {
  await db
    .insertInto('client_credits')
    .values(row)
    .onConflict((conflict) => conflict.columns(['space_id', 'client_ref', 'currency']).doNothing())
    .execute();
  return defined(
    await findByRef(db, row.space_id, row.client_ref, row.currency),
    'the client credit just written',
  );
}

/** Takes the credit's row lock until the transaction ends (top-up requests are minted under it). */
export async function lock(db: Queryable, spaceId: string, id: string) {
  await db
    .selectFrom('client_credits')
    .select('id')
    .where('space_id', '=', spaceId)
    .where('id', '=', id)
    .forUpdate()
    .execute();
}

export function findById(db: Queryable, spaceId: string, id: string) {
  return db
    .selectFrom('client_credits')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function findByPageToken(db: Queryable, token: string) {
  return db.selectFrom('client_credits').selectAll().where('page_token', '=', token).executeTakeFirst();
}

/**
 * A space's client credits with balances, last call and top-ups, newest first, one page from
 * a (created_at, id) cursor.
 */
export function listWithBalances(
  db: Queryable,
  spaceId: string,
  page: { before?: { at: Date; id: string } | undefined; limit: number; id?: string },
) {
  let query = db
    .selectFrom('client_credits')
    .innerJoin('ledger_accounts', 'ledger_accounts.id', 'client_credits.ledger_account_id')
    .leftJoin('contacts', 'contacts.id', 'client_credits.contact_id')
    .select((eb) => [
      'client_credits.id',
      'client_credits.client_ref',
      'client_credits.currency',
      'client_credits.contact_id',
      'client_credits.page_token',
      'client_credits.created_at',
      'ledger_accounts.balance',
      'contacts.name as contact_name',
      eb
        .selectFrom('charges')
        .select((inner) => inner.fn.max('charges.created_at').as('at'))
        .whereRef('charges.client_credit_id', '=', 'client_credits.id')
        .as('last_call_at'),
      eb
        .selectFrom('settlements')
        .innerJoin('payment_requests', 'payment_requests.id', 'settlements.payment_request_id')
        .select((inner) => inner.fn.countAll<string>().as('count'))
        .whereRef('payment_requests.client_credit_id', '=', 'client_credits.id')
        .as('top_ups'),
    ])
    .where('client_credits.space_id', '=', spaceId);
  if (page.id !== undefined) query = query.where('client_credits.id', '=', page.id);
  const before = page.before;
  if (before) {
    query = query.where((eb) =>
      eb.or([
        eb('client_credits.created_at', '<', before.at),
        eb.and([eb('client_credits.created_at', '=', before.at), eb('client_credits.id', '<', before.id)]),
      ]),
    );
  }
  return query
    .orderBy('client_credits.created_at', 'desc')
    .orderBy('client_credits.id', 'desc')
    .limit(page.limit)
    .execute();
}

export async function setContact(db: Queryable, spaceId: string, id: string, contactId: string) {
  await db
    .updateTable('client_credits')
    .set({ contact_id: contactId })
    .where('space_id', '=', spaceId)
    .where('id', '=', id)
    .execute();
}

/** What the balance page lists: paid calls and settled top-ups, newest first. */
export function history(db: Queryable, spaceId: string, clientCreditId: string, limit: number) {
  const calls = db
    .selectFrom('charges')
    .leftJoin('resources', 'resources.id', 'charges.resource_id')
    .select([
      'charges.id',
      'charges.amount',
      'charges.memo',
      'charges.created_at',
      'resources.address as resource',
    ])
    .where('charges.space_id', '=', spaceId)
    .where('charges.client_credit_id', '=', clientCreditId)
    .orderBy('charges.created_at', 'desc')
    .limit(limit)
    .execute();
  const topUps = db
    .selectFrom('settlements')
    .innerJoin('payment_requests', 'payment_requests.id', 'settlements.payment_request_id')
    .select(['settlements.id', 'settlements.amount', 'settlements.rail', 'settlements.settled_at'])
    .where('settlements.space_id', '=', spaceId)
    .where('payment_requests.client_credit_id', '=', clientCreditId)
    .orderBy('settlements.settled_at', 'desc')
    .limit(limit)
    .execute();
  return Promise.all([calls, topUps]).then(([callRows, topUpRows]) => ({
    calls: callRows,
    topUps: topUpRows,
  }));
}

export type AdjustmentRow = Omit<Selectable<ClientCreditAdjustmentsTable>, 'entry_id'>;

/** The adjustment's row, written in its ledger entry's own statement (and only if the entry is). */
export function adjustmentRider(row: AdjustmentRow): Rider {
  return (entry) => sql`
    INSERT INTO client_credit_adjustments (id, space_id, client_credit_id, amount, refund, reason, user_id,
      entry_id, created_at)
    SELECT ${row.id}::uuid, ${row.space_id}::uuid, ${row.client_credit_id}::uuid, ${row.amount}::numeric,
      ${row.refund}::boolean, ${row.reason}::text, ${row.user_id}::uuid, ${entry}.id,
      ${row.created_at}::timestamptz
    FROM ${entry}`;
}

/** A client's adjustments with who made them, newest first. */
export function adjustments(db: Queryable, spaceId: string, clientCreditId: string, limit: number) {
  return db
    .selectFrom('client_credit_adjustments')
    .innerJoin('users', 'users.id', 'client_credit_adjustments.user_id')
    .select([
      'client_credit_adjustments.id',
      'client_credit_adjustments.amount',
      'client_credit_adjustments.refund',
      'client_credit_adjustments.reason',
      'client_credit_adjustments.entry_id',
      'client_credit_adjustments.created_at',
      'users.name as by_name',
      'users.email as by_email',
    ])
    .where('client_credit_adjustments.space_id', '=', spaceId)
    .where('client_credit_adjustments.client_credit_id', '=', clientCreditId)
    .orderBy('client_credit_adjustments.created_at', 'desc')
    .orderBy('client_credit_adjustments.id', 'desc')
    .limit(limit)
    .execute();
}
