import { PAGE_SIZE, pageOf, readCursor } from '../../core/cursor.ts';
import type { Db } from '../../platform/db/database.ts';
import { requireRole } from '../spaces/index.ts';
import { countUnread, listNotifications, markAllRead } from './store.ts';

/** A member's own notifications in one space, newest first, 50 a page (app API and page). */
export async function listForMember(
  deps: { db: Db },
  spaceId: string,
  userId: string,
  query: { cursor?: string | undefined } = {},
) {
  await requireRole(deps.db, spaceId, userId);
  const before = readCursor(query.cursor);
  const rows = await listNotifications(deps.db, spaceId, userId, { before, limit: PAGE_SIZE + 1 });
  const page = pageOf(rows, (row) => ({ at: row.created_at, id: row.id }));
  return {
    items: page.items.map((row) => ({
      ...row,
      created_at: row.created_at.toISOString(),
      read_at: row.read_at ? row.read_at.toISOString() : null,
    })),
    next_cursor: page.next_cursor,
  };
}

/** How many of a member's notifications in one space are unread (the shell's badge). */
export function unreadCount(deps: { db: Db }, spaceId: string, userId: string): Promise<number> {
  return countUnread(deps.db, spaceId, userId);
}

/** Marks every notification of the member in the space read (the badge goes to zero). */
export async function markRead(deps: { db: Db }, spaceId: string, userId: string, at: Date) {
  await requireRole(deps.db, spaceId, userId);
  await markAllRead(deps.db, spaceId, userId, at);
}
