import { AppError } from '../../core/errors.ts';
import type { Db } from '../../platform/db/database.ts';
import type { Shell, WebRole } from '../../platform/web/shell.ts';
import { unreadCount } from '../notifications/index.ts';
import { getSpace, listSpaces, type SpacesDeps } from '../spaces/index.ts';

// The web app's shell: who is looking, their books, and the badge. Composed here from the
// users, spaces and notifications features so the platform's plumbing imports no feature.

export type ShellDeps = SpacesDeps & { db: Db };

/**
 * The viewer's shell; a book they are not a member of does not exist for them (not_found). The
 * switcher offers the 50 newest books and the current one; the Books screen pages through all.
 */
export async function loadShell(
  deps: ShellDeps,
  user: Shell['user'],
  bookId: string | undefined,
): Promise<Omit<Shell, 'csrfToken' | 'path'>> {
  const userId = user.id;
  // The badge is counted while the books are read: a book that is not theirs has no unread
  // notifications of theirs, and answers not_found below anyway.
  const [spaces, unread] = await Promise.all([
    listSpaces(deps, userId),
    bookId === undefined || !UUID_SHAPE.test(bookId) ? 0 : unreadCount(deps, bookId, userId),
  ]);
  const books = spaces.items.map((space) => ({
    id: space.id,
    name: space.name,
    role: space.role as WebRole,
  }));
  let book = bookId === undefined ? null : (books.find((candidate) => candidate.id === bookId) ?? null);
  // A book older than the switcher's 50 is read on its own (one more query, only then).
  if (bookId !== undefined && book === null) {
    const current = await currentBook(deps, userId, bookId);
    book = { id: current.id, name: current.name, role: current.role as WebRole };
    books.push(book);
  }
  return { user, books, book, unread: book ? unread : 0 };
}

/** The book the path names, with the viewer's role; not_found when they are not a member. */
async function currentBook(deps: ShellDeps, userId: string, bookId: string) {
  // Only a uuid can name a book; anything else is a book that does not exist, not a query.
  if (!UUID_SHAPE.test(bookId))
    throw new AppError('not_found', 'No such book, or you are not a member of it.');
  try {
    return await getSpace(deps, userId, bookId);
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found')
      throw new AppError('not_found', 'No such book, or you are not a member of it.');
    throw error;
  }
}

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
