import type { Queryable } from '../../platform/db/database.ts';

// The chain watch on the Home screen: a network whose cursor has not moved for longer than
// `maxAge` is lagging (the watcher stopped, or its RPC fails). A network never watched has no
// cursor and is not reported.

export type WatchLag = { network: string; since: Date };

export async function laggingNetworks(db: Queryable, now: Date, maxAgeMs: number): Promise<WatchLag[]> {
  const rows = await db
    .selectFrom('chain_cursors')
    .select(['network', 'updated_at'])
    .where('updated_at', '<', new Date(now.getTime() - maxAgeMs))
    .orderBy('network')
    .execute();
  return rows.map((row) => ({ network: row.network, since: row.updated_at }));
}
