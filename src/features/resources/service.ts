import type { Queryable } from '../../platform/db/database.ts';
import * as store from './store.ts';

/**
 * Files a payment or a charge under the endpoint it paid for: the address creates the card the
 * first time and updates it after. An empty address files nothing.
 */
export async function fileResource(
  db: Queryable,
  spaceId: string,
  address: string | undefined,
  at: Date,
): Promise<string | null> {
  if (address === undefined || address === '') return null;
  return store.upsertResource(db, spaceId, address, at);
}

export function getResource(db: Queryable, spaceId: string, resourceId: string) {
  return store.findResource(db, spaceId, resourceId);
}
