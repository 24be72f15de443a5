import type { Queryable } from '../../platform/db/database.ts';

// Kysely queries for the receipt keys and the signed receipts.

export type ReceiptKeyRow = { space_id: string; address: string; key_sealed: string; created_at: Date };

export function findKey(db: Queryable, spaceId: string) {
  return db.selectFrom('x402_receipt_keys').selectAll().where('space_id', '=', spaceId).executeTakeFirst();
}

/** Inserts a book's first key; a concurrent first insert wins and this one is dropped. */
export async function insertKey(db: Queryable, row: ReceiptKeyRow) {
  await db
    .insertInto('x402_receipt_keys')
    .values(row)
    .onConflict((conflict) => conflict.column('space_id').doNothing())
    .execute();
}

/** A receipt key by its address, with the name of the book it signs for. */
export function findSigner(db: Queryable, address: string) {
  return db
    .selectFrom('x402_receipt_keys as k')
    .innerJoin('spaces as s', 's.id', 'k.space_id')
    .select(['k.address', 'k.created_at', 's.name as book'])
    .where('k.address', '=', address)
    .executeTakeFirst();
}

export function findReceipt(db: Queryable, spaceId: string, claimId: string) {
  return db
    .selectFrom('x402_receipts')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('claim_id', '=', claimId)
    .executeTakeFirst();
}

/**
 * Stores a claim's receipt and answers the row stored; undefined when a receipt stored first (a
 * racing call) is kept instead.
 */
export function insertReceipt(
  db: Queryable,
  row: { claim_id: string; space_id: string; reference: string; receipt: unknown; issued_at: Date },
) {
  return db
    .insertInto('x402_receipts')
    .values({ ...row, receipt: JSON.stringify(row.receipt) })
    .onConflict((conflict) => conflict.columns(['space_id', 'claim_id']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** The receipt (by claim id) of each of these ledger entries that has one. */
export async function receiptsOfEntries(db: Queryable, spaceId: string, entryIds: string[]) {
  if (entryIds.length === 0) return [];
  return db
    .selectFrom('x402_receipts as r')
    .innerJoin('settlements as s', (join) =>
      join.onRef('s.space_id', '=', 'r.space_id').onRef('s.reference', '=', 'r.reference'),
    )
    .select(['s.entry_id', 'r.claim_id'])
    .where('r.space_id', '=', spaceId)
    .where('s.entry_id', 'in', entryIds)
    .execute();
}
