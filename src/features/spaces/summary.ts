import type { Queryable } from '../../platform/db/database.ts';

/** True once a second person belongs to the book (the Home checklist's "invite a member"). */
export async function hasSecondMember(db: Queryable, spaceId: string): Promise<boolean> {
  const rows = await db
    .selectFrom('members')
    .select('user_id')
    .where('space_id', '=', spaceId)
    .limit(2)
    .execute();
  return rows.length > 1;
}
