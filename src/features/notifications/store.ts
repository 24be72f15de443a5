import { randomUUID } from 'node:crypto';
import type { Cursor } from '../../core/cursor.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { olderThan } from '../../platform/db/paging.ts';

export type NewNotification = {
  spaceId: string;
  userId: string;
  kind: string;
  subjectId: string | null;
  payload: Record<string, unknown>;
  at: Date;
};

/** One notification per (person, kind, subject): asking twice records it once. */
export async function insertNotification(db: Queryable, notification: NewNotification): Promise<void> {
  await db
    .insertInto('notifications')
    .values({
      id: randomUUID(),
      space_id: notification.spaceId,
      user_id: notification.userId,
      kind: notification.kind,
      subject_id: notification.subjectId,
      payload: JSON.stringify(notification.payload),
      created_at: notification.at,
    })
    .onConflict((conflict) => conflict.columns(['space_id', 'user_id', 'kind', 'subject_id']).doNothing())
    .execute();
}

/** A member's notifications in a space, newest first, `limit` older than `before`. */
export function listNotifications(
  db: Queryable,
  spaceId: string,
  userId: string,
  page: { before: Cursor | undefined; limit: number },
) {
  return db
    .selectFrom('notifications')
    .select(['id', 'kind', 'subject_id', 'payload', 'created_at', 'read_at'])
    .where('space_id', '=', spaceId)
    .where('user_id', '=', userId)
    .where(olderThan('created_at', 'id', page.before))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .execute();
}

// The unread count (the shell's badge) is read with the viewer's books, in the same statement:
// see app-shell/store.ts `readViewer`.

export async function markAllRead(db: Queryable, spaceId: string, userId: string, at: Date) {
  await db
    .updateTable('notifications')
    .set({ read_at: at })
    .where('space_id', '=', spaceId)
    .where('user_id', '=', userId)
    .where('read_at', 'is', null)
    .execute();
}
