import { type Selectable, sql } from 'kysely';
import { defined } from '../../core/assert.ts';
import type { Queryable } from '../../platform/db/database.ts';
import type { ChainTransfersTable } from '../../platform/db/schema.ts';

/** The network's next block to read, without a lock. Created at `start` the first time. */
export async function cursorAt(db: Queryable, network: string, start: bigint, at: Date): Promise<bigint> {
  await sql`INSERT INTO chain_cursors (network, next_block, updated_at) VALUES (${network}, ${start.toString()}, ${at})
    ON CONFLICT (network) DO NOTHING`.execute(db);
  const result = await sql<{ next_block: string }>`
    SELECT next_block::text FROM chain_cursors WHERE network = ${network}`.execute(db);
  return BigInt(defined(result.rows[0], "the network's cursor row").next_block);
}

/**
 * The network's cursor, locked for this transaction; undefined when another process holds it
 * (it is booking this network right now).
 */
export async function lockCursor(db: Queryable, network: string) {
  const result = await sql<{ next_block: string }>`
    SELECT next_block::text FROM chain_cursors WHERE network = ${network} FOR UPDATE SKIP LOCKED`.execute(db);
  const row = result.rows[0];
  return row === undefined ? undefined : BigInt(row.next_block);
}

export async function advanceCursor(db: Queryable, network: string, next: bigint, at: Date) {
  await db
    .updateTable('chain_cursors')
    .set({ next_block: next.toString(), updated_at: at })
    .where('network', '=', network)
    .execute();
}

export type WatchedAccount = { id: string; space_id: string; address: string; currency: string };

/**
 * Proven accounts on `network` that have a request able to take money: the addresses to follow.
 * One account per address (the oldest), as the facilitator chooses.
 */
export async function watchedAccounts(db: Queryable, network: string, now: Date): Promise<WatchedAccount[]> {
  const result = await sql<WatchedAccount>`
    SELECT DISTINCT ON (a.address_proven) a.id, a.space_id, a.address_proven AS address, a.currency
    FROM accounts a
    WHERE a.kind = 'crypto' AND a.network = ${network} AND a.address_proven IS NOT NULL
      AND a.address_proven = lower(a.address)
      AND EXISTS (SELECT 1 FROM payment_requests p
        WHERE p.account_id = a.id AND p.status = 'active' AND p.expires_at > ${now})
    ORDER BY a.address_proven, a.created_at, a.id`.execute(db);
  return result.rows;
}

export type TransferRow = Selectable<ChainTransfersTable>;

/** Records a transfer once: false when (network, tx, log index) is booked already. */
export async function insertTransfer(db: Queryable, row: TransferRow): Promise<boolean> {
  const result = await db
    .insertInto('chain_transfers')
    .values(row)
    .onConflict((conflict) =>
      // A literal, not a parameter: PostgreSQL matches the partial unique index by its predicate.
      conflict
        .columns(['network', 'tx_hash', 'log_index'])
        .where('status', '=', sql.lit('booked'))
        .doNothing(),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function transferExists(db: Queryable, network: string, txHash: string, logIndex: number) {
  const row = await db
    .selectFrom('chain_transfers')
    .select('id')
    .where('network', '=', network)
    .where('tx_hash', '=', txHash)
    .where('log_index', '=', logIndex)
    .executeTakeFirst();
  return row !== undefined;
}

/** A recorded transfer with the address of the account it went to. */
export type TransferToAccount = TransferRow & { address: string; currency: string };

/** Booked transfers at or above `fromBlock`: the ones a reorganisation could still remove. */
export function recentBooked(
  db: Queryable,
  network: string,
  fromBlock: bigint,
): Promise<TransferToAccount[]> {
  return db
    .selectFrom('chain_transfers as t')
    .innerJoin('accounts as a', (join) => join.onRef('a.id', '=', 't.account_id'))
    .selectAll('t')
    .select([sql<string>`lower(a.address)`.as('address'), 'a.currency'])
    .where('t.network', '=', network)
    .where('t.status', '=', 'booked')
    .where('t.block_number', '>=', fromBlock.toString())
    .orderBy('t.block_number')
    .execute();
}

/**
 * Transfers the watch booked and a reorganisation reversed, at or above `fromBlock`, that no row
 * books again yet: their transaction may be mined again.
 */
export function reversedNotRebooked(
  db: Queryable,
  network: string,
  fromBlock: bigint,
): Promise<TransferToAccount[]> {
  return db
    .selectFrom('chain_transfers as t')
    .innerJoin('accounts as a', (join) => join.onRef('a.id', '=', 't.account_id'))
    .selectAll('t')
    .select([sql<string>`lower(a.address)`.as('address'), 'a.currency'])
    .where('t.network', '=', network)
    .where('t.status', '=', 'reversed')
    .where('t.source', '=', 'watch')
    .where('t.block_number', '>=', fromBlock.toString())
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('chain_transfers as r').select('r.id').whereRef('r.rebooks', '=', 't.id'))),
    )
    .orderBy('t.block_number')
    .execute();
}

/** First evidence that a booked transfer left the chain: the head of the node that said so. */
export async function markSuspect(db: Queryable, id: string, head: bigint) {
  await db
    .updateTable('chain_transfers')
    .set({ suspect_since_block: head.toString() })
    .where('id', '=', id)
    .where('status', '=', 'booked')
    .where('suspect_since_block', 'is', null)
    .execute();
}

/** The transfer's block (or its receipt) was seen again: the earlier evidence no longer counts. */
export async function clearSuspect(db: Queryable, id: string) {
  await db.updateTable('chain_transfers').set({ suspect_since_block: null }).where('id', '=', id).execute();
}

/** Marks a transfer reversed, once: false when another process got there first. */
export async function markReversed(db: Queryable, id: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('chain_transfers')
    .set({ status: 'reversed', reversed_at: at })
    .where('id', '=', id)
    .where('status', '=', 'booked')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * The transfer was mined again in another block (a reorganisation that kept it). Its log index is
 * kept as booked: the settlements' references name it.
 */
export async function moveTransfer(db: Queryable, id: string, blockNumber: bigint, blockHash: string) {
  await db
    .updateTable('chain_transfers')
    .set({ block_number: blockNumber.toString(), block_hash: blockHash, suspect_since_block: null })
    .where('id', '=', id)
    .execute();
}

/** Locks a reversed transfer that no row books again yet; undefined otherwise. */
export async function lockReversedNotRebooked(db: Queryable, id: string) {
  const row = await db
    .selectFrom('chain_transfers as t')
    .selectAll('t')
    .where('t.id', '=', id)
    .where('t.status', '=', 'reversed')
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('chain_transfers as r').select('r.id').whereRef('r.rebooks', '=', 't.id'))),
    )
    .forUpdate()
    .executeTakeFirst();
  return row;
}
