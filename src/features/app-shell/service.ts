import type { Clock } from '../../core/clock.ts';
import { bookPeopleFormat } from '../../core/people-format.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { Member } from '../../platform/http/member.ts';
import type { Viewer } from '../../platform/web/shell.ts';
import { sessionTokenHash } from '../users/index.ts';
import * as store from './store.ts';

// The web app's shell: who is looking, their books, the badge and their membership of the open
// book, read in one statement (store.ts says why). Composed here from the users, spaces and
// notifications features' tables so the platform's plumbing imports no feature.

export type ShellDeps = { db: Queryable; clock: Clock };

/**
 * The viewer behind a session token, or undefined when it opens no live session. `open` is the
 * book the address names with the viewer's role, unread badge and proven membership (a Member,
 * which the book's services take instead of reading the role again); null when the viewer is
 * not a member of it, or when no book is named. The switcher offers the 50 newest books and the
 * open one.
 */
export async function loadViewer(
  deps: ShellDeps,
  token: string,
  bookId: string | undefined,
): Promise<Viewer | undefined> {
  const tokenHash = sessionTokenHash(token);
  if (tokenHash === undefined) return undefined;
  // Only a uuid can name a book; anything else is a book that does not exist, not a query.
  const openId = bookId !== undefined && UUID_SHAPE.test(bookId) ? bookId : null;
  const rows = await store.readViewer(deps.db, tokenHash, deps.clock.now(), openId);
  const first = rows[0];
  if (!first) return undefined;
  const books = [];
  for (const row of rows) {
    if (row.book_id === null || row.book_name === null || row.book_role === null) continue;
    books.push({ id: row.book_id, name: row.book_name, role: row.book_role });
  }
  const user = { id: first.user_id, name: first.user_name, email: first.user_email };
  if (first.open_id === null || first.open_name === null || first.open_role === null)
    return { user, csrfToken: first.csrf_token, books, open: null };
  const member = Member.fromMembersRow({ spaceId: first.open_id, userId: user.id, role: first.open_role });
  let book = books.find((candidate) => candidate.id === first.open_id);
  if (!book) {
    // A book older than the switcher's 50 is offered too, after them.
    book = { id: first.open_id, name: first.open_name, role: first.open_role };
    books.push(book);
  }
  const unread = Number(first.open_unread ?? 0);
  const format = bookPeopleFormat({ time_zone: first.open_time_zone, locale: first.open_locale });
  return { user, csrfToken: first.csrf_token, books, open: { book, member, unread, format } };
}

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
