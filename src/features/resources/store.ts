import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../platform/db/database.ts';

/** The resource row for an address, created on first use and touched on every use. */
export async function upsertResource(
  db: Queryable,
  spaceId: string,
  address: string,
  at: Date,
): Promise<string> {
  const row = await db
    .insertInto('resources')
    .values({ id: randomUUID(), space_id: spaceId, address, created_at: at, updated_at: at })
    .onConflict((conflict) => conflict.columns(['space_id', 'address']).doUpdateSet({ updated_at: at }))
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export function findResource(db: Queryable, spaceId: string, resourceId: string) {
  return db
    .selectFrom('resources')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('id', '=', resourceId)
    .executeTakeFirst();
}
