import type { Queryable } from '../../platform/db/database.ts';

/** True once the book has issued any integration key (the Home checklist's "first key"). */
export async function hasAnyKey(db: Queryable, spaceId: string): Promise<boolean> {
  const found = await db
    .selectFrom('integration_keys')
    .select('id')
    .where('space_id', '=', spaceId)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return found !== undefined;
}
