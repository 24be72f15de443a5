import { AppError } from '../../core/errors.ts';
import type { Db } from '../../platform/db/database.ts';
import type { Shell, WebRole } from '../../platform/web/shell.ts';
import { unreadCount } from '../notifications/index.ts';
import { listSpaces, type SpacesDeps } from '../spaces/index.ts';
import { getUser } from '../users/index.ts';

// The web app's shell: who is looking, their books, and the badge. Composed here from the
// users, spaces and notifications features so the platform's plumbing imports no feature.

export type ShellDeps = SpacesDeps & { db: Db };

/** The viewer's shell; a book they are not a member of does not exist for them (not_found). */
export async function loadShell(
  deps: ShellDeps,
  userId: string,
  bookId: string | undefined,
): Promise<Omit<Shell, 'csrfToken' | 'path'>> {
  const [user, spaces] = await Promise.all([getUser(deps, userId), listSpaces(deps, userId)]);
  const books = spaces.map((space) => ({ id: space.id, name: space.name, role: space.role as WebRole }));
  const book = bookId === undefined ? null : (books.find((candidate) => candidate.id === bookId) ?? null);
  if (bookId !== undefined && book === null) {
    throw new AppError('not_found', 'No such book, or you are not a member of it.');
  }
  const unread = book ? await unreadCount(deps, book.id, userId) : 0;
  return { user: { id: user.id, name: user.name, email: user.email }, books, book, unread };
}
