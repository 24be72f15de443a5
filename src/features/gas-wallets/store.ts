import { sql } from 'kysely';
import type { Queryable } from '../../platform/db/database.ts';

export type LaneBalance = { network: string; address: string; wei: bigint; lowSince: Date | null };

/**
 * Stores a lane's balance reading; answers when it fell below the threshold (kept from the
 * first low reading until one above it), and whether this reading is the fall.
 */
export async function recordBalance(
  db: Queryable,
  reading: { network: string; address: string; wei: bigint; low: boolean; at: Date },
): Promise<{ lowSince: Date | null; fell: boolean }> {
  const result = await sql<{ low_since: Date | null; was_low: boolean | null }>`
    WITH before AS (
      SELECT low_since FROM gas_wallet_balances WHERE network = ${reading.network} AND address = ${reading.address}
    )
    INSERT INTO gas_wallet_balances AS b (network, address, wei, low_since, read_at)
    VALUES (${reading.network}, ${reading.address}, ${reading.wei.toString()}::numeric,
      ${reading.low ? reading.at : null}::timestamptz, ${reading.at})
    ON CONFLICT (network, address) DO UPDATE SET wei = EXCLUDED.wei, read_at = EXCLUDED.read_at,
      low_since = CASE WHEN EXCLUDED.low_since IS NULL THEN NULL ELSE COALESCE(b.low_since, EXCLUDED.low_since) END
    RETURNING b.low_since, (SELECT low_since IS NOT NULL FROM before) AS was_low`.execute(db);
  const row = result.rows[0];
  const lowSince = row?.low_since ?? null;
  return { lowSince, fell: lowSince !== null && row?.was_low !== true };
}

/** Lanes whose last reading was below the threshold, by network and address. */
export async function lowLanes(db: Queryable): Promise<LaneBalance[]> {
  const rows = await db
    .selectFrom('gas_wallet_balances')
    .select(['network', 'address', 'wei', 'low_since'])
    .where('low_since', 'is not', null)
    .orderBy('network')
    .orderBy('address')
    .limit(50)
    .execute();
  return rows.map((row) => ({
    network: row.network,
    address: row.address,
    wei: BigInt(row.wei),
    lowSince: row.low_since,
  }));
}

/** The books that settle x402 payments on `network` (a proven address there), for the alarm. */
export async function spacesSettlingOn(db: Queryable, networkName: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('accounts')
    .select('space_id')
    .distinct()
    .where('kind', '=', 'crypto')
    .where('network', '=', networkName)
    .where('address_proven', 'is not', null)
    .limit(limit)
    .execute();
  return rows.map((row) => row.space_id);
}
