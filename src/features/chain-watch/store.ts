import { type Selectable, sql } from 'kysely';
import type { Queryable } from '../../platform/db/database.ts';
import type { ChainTransfersTable } from '../../platform/db/schema.ts';

/**
 * The network's cursor, locked for this transaction; undefined when another process holds it
 * (it is watching this network right now). Created at `start` the first time.
 */
export async function lockCursor(db: Queryable, network: string, start: bigint, at: Date) {
  await sql`INSERT INTO chain_cursors (network, next_block, updated_at) VALUES (${network}, ${start.toString()}, ${at})
    ON CONFLICT (network) DO NOTHING`.execute(db);
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

/** Records a transfer once: false when (network, tx, log index) was recorded already. */
export async function insertTransfer(db: Queryable, row: TransferRow): Promise<boolean> {
  const result = await db
    .insertInto('chain_transfers')
    .values(row)
    .onConflict((conflict) => conflict.columns(['network', 'tx_hash', 'log_index']).doNothing())
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

/** Booked transfers at or above `fromBlock`: the ones a reorganisation could still remove. */
export function recentBooked(db: Queryable, network: string, fromBlock: bigint) {
  return db
    .selectFrom('chain_transfers')
    .selectAll()
    .where('network', '=', network)
    .where('status', '=', 'booked')
    .where('block_number', '>=', fromBlock.toString())
    .orderBy('block_number')
    .execute();
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

/** The transfer was mined again in another block (a reorganisation that kept it). */
export async function moveTransfer(db: Queryable, id: string, blockNumber: bigint, blockHash: string) {
  await db
    .updateTable('chain_transfers')
    .set({ block_number: blockNumber.toString(), block_hash: blockHash })
    .where('id', '=', id)
    .execute();
}
