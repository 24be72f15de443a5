import type { Queryable } from '../../platform/db/database.ts';

// The Home screen's own table: who hid the first-steps checklist on which book.

export async function isChecklistDismissed(db: Queryable, spaceId: string, userId: string): Promise<boolean> {
  const found = await db
    .selectFrom('home_checklist_dismissals')
    .select('dismissed_at')
    .where('space_id', '=', spaceId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return found !== undefined;
}

export async function dismissChecklist(
  db: Queryable,
  spaceId: string,
  userId: string,
  at: Date,
): Promise<void> {
  await db
    .insertInto('home_checklist_dismissals')
    .values({ space_id: spaceId, user_id: userId, dismissed_at: at })
    .onConflict((conflict) => conflict.columns(['space_id', 'user_id']).doNothing())
    .execute();
}
