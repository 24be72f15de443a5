import type { Selectable } from 'kysely';
import type { Queryable } from '../../platform/db/database.ts';
import { committedByOthers } from '../../platform/db/lasting.ts';
import type { ClientCreditsTable } from '../../platform/db/schema.ts';

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

/** The fields of a client credit that never change, and whether another transaction wrote it. */
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
      committedByOthers.as('lasting'),
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
  return (await findByRef(db, row.space_id, row.client_ref, row.currency))!;
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

export function listWithBalances(db: Queryable, spaceId: string) {
  return db
    .selectFrom('client_credits')
    .innerJoin('ledger_accounts', 'ledger_accounts.id', 'client_credits.ledger_account_id')
    .leftJoin('contacts', 'contacts.id', 'client_credits.contact_id')
    .select([
      'client_credits.id',
      'client_credits.client_ref',
      'client_credits.currency',
      'client_credits.contact_id',
      'client_credits.page_token',
      'client_credits.created_at',
      'ledger_accounts.balance',
      'contacts.name as contact_name',
    ])
    .where('client_credits.space_id', '=', spaceId)
    .orderBy('client_credits.created_at')
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
