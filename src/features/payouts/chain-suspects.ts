import type { Queryable } from '../../platform/db/database.ts';

// The chain rail's marks on executed payments whose transaction a node said was gone: the
// head of that node, so a second sighting a block later can be told from the first.

export async function suspectSince(db: Queryable, payoutId: string): Promise<bigint | null> {
  const row = await db
    .selectFrom('payout_chain_suspects')
    .select('since_block')
    .where('payout_id', '=', payoutId)
    .executeTakeFirst();
  return row === undefined ? null : BigInt(row.since_block);
}

export async function markSuspect(db: Queryable, spaceId: string, payoutId: string, head: bigint) {
  await db
    .insertInto('payout_chain_suspects')
    .values({ payout_id: payoutId, space_id: spaceId, since_block: head.toString() })
    .onConflict((conflict) => conflict.columns(['space_id', 'payout_id']).doNothing())
    .execute();
}

export async function clearSuspect(db: Queryable, payoutId: string) {
  await db.deleteFrom('payout_chain_suspects').where('payout_id', '=', payoutId).execute();
}
