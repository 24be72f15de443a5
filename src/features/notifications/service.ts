import { PAGE_SIZE, pageOf, readCursor } from '../../core/cursor.ts';
import type { Db } from '../../platform/db/database.ts';
import { type Member, spaceOfMember } from '../../platform/http/member.ts';
import { listNotifications, markAllRead } from './store.ts';

/** A member's own notifications in one space, newest first, 50 a page (app API and page). */
export async function listForMember(
  deps: { db: Db },
  member: Member,
  query: { cursor?: string | undefined } = {},
) {
  const spaceId = spaceOfMember(member);
  const userId = member.userId;
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

/** Marks every notification of the member in the space read (the badge goes to zero). */
export async function markRead(deps: { db: Db }, member: Member, at: Date) {
  await markAllRead(deps.db, spaceOfMember(member), member.userId, at);
}
