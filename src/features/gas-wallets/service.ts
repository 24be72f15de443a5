import { formatEther } from 'viem';
import type { Clock } from '../../core/clock.ts';
import { type GasBalance, isGasLow } from '../../platform/chain/chain.ts';
import type { Db } from '../../platform/db/database.ts';
import { insertNotification } from '../notifications/index.ts';
import { listOwnerIds } from '../spaces/index.ts';
import * as store from './store.ts';

// The gas wallet's lanes are the platform's, not a book's: their balances are read on a timer
// (never by a page), stored, and a lane that falls below GAS_LOW_WEI tells the owners of the
// books settling on its network once per fall, and shows on their Home while it stays low.

export type GasWalletDeps = { db: Db; clock: Clock; lowWei: bigint };

/** How many books one fall notifies at most (the rest see it on Home). */
const NOTIFIED_SPACES_MAX = 500;

/**
 * Stores each reading; a lane that just fell below the threshold notifies owners. Answers the
 * readings with whether each lane is low (what the metrics publish).
 */
export async function recordGasBalances(
  deps: GasWalletDeps,
  readings: readonly GasBalance[],
): Promise<(GasBalance & { low: boolean })[]> {
  const at = deps.clock.now();
  const judged = readings.map((reading) => ({ ...reading, low: isGasLow(reading.wei, deps.lowWei) }));
  for (const reading of judged) {
    const address = reading.address.toLowerCase();
    await deps.db.transaction().execute(async (tx) => {
      const stored = await store.recordBalance(tx, {
        network: reading.caip2,
        address,
        wei: reading.wei,
        low: reading.low,
        at,
      });
      if (!stored.fell) return;
      const payload = { network: reading.caip2, address, balance: formatEther(reading.wei) };
      for (const spaceId of await store.spacesSettlingOn(tx, reading.network, NOTIFIED_SPACES_MAX)) {
        for (const userId of await listOwnerIds(tx, spaceId)) {
          const subjectId = null;
          await insertNotification(tx, { spaceId, userId, kind: 'gas_wallet_low', subjectId, payload, at });
        }
      }
    });
  }
  return judged;
}

/** The lanes Home warns about: low at their last reading. */
export function lowGasWallets(db: Db) {
  return store.lowLanes(db);
}
