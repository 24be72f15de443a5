import { compiledOnce, type QueryArg, writtenCount } from '../../platform/db/compiled-once.ts';
import type { Queryable } from '../../platform/db/database.ts';

// The web app shell's one read per page. A page used to spend a round trip on each of the
// session, the viewer's books, the unread badge and the role in the open book; on a loopback
// connection each statement costs the server a socket write and a backend wake-up, more than
// the JavaScript around it. So the shell reads them together, read-only, across the tables of
// the features it composes (sessions and users, members and spaces, notifications); each of
// those features still writes its own tables alone.

/** How many books the switcher offers (the Books screen pages through all). */
export const SWITCHER_BOOKS = 50;

/**
 * The live session's person and CSRF token, one row per book of the switcher (the newest 50,
 * with the viewer's role; a single row with null book columns when they have none), and on
 * every row the open book (`openId`) with their role and unread count when they are a member
 * of it (null columns otherwise). No row: no live session for this token.
 */
export function readViewer(db: Queryable, tokenHash: string, now: Date, openId: string | null) {
  return viewerQuery(db, { tokenHash, now, openId });
}

type ViewerArgs = { tokenHash: string; now: Date; openId: string | null };

const viewerQuery = compiledOnce((db: Queryable, arg: QueryArg<ViewerArgs>) =>
  db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('members')
          .innerJoin('spaces', 'spaces.id', 'members.space_id')
          .select(['spaces.id', 'spaces.name', 'spaces.created_at', 'members.role'])
          .whereRef('members.user_id', '=', 'sessions.user_id')
          .orderBy('spaces.created_at', 'desc')
          .orderBy('spaces.id', 'desc')
          .limit(writtenCount(SWITCHER_BOOKS))
          .as('book'),
      (join) => join.onTrue(),
    )
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('members')
          .innerJoin('spaces', 'spaces.id', 'members.space_id')
          .select(['spaces.id', 'spaces.name', 'spaces.time_zone', 'spaces.locale', 'members.role'])
          .select((inner) =>
            inner
              .selectFrom('notifications')
              .select((count) => count.fn.countAll<string>().as('unread'))
              .whereRef('notifications.space_id', '=', 'members.space_id')
              .whereRef('notifications.user_id', '=', 'members.user_id')
              .where('notifications.read_at', 'is', null)
              .as('unread'),
          )
          .whereRef('members.user_id', '=', 'sessions.user_id')
          .where('members.space_id', '=', arg('openId'))
          .as('open'),
      (join) => join.onTrue(),
    )
    .select([
      'users.id as user_id',
      'users.name as user_name',
      'users.email as user_email',
      'sessions.csrf_token',
      'book.id as book_id',
      'book.name as book_name',
      'book.role as book_role',
      'open.id as open_id',
      'open.name as open_name',
      'open.role as open_role',
      'open.unread as open_unread',
      'open.time_zone as open_time_zone',
      'open.locale as open_locale',
    ])
    .where('sessions.token_hash', '=', arg('tokenHash'))
    .where('sessions.revoked_at', 'is', null)
    .where('sessions.expires_at', '>', arg('now'))
    .orderBy('book.created_at', 'desc')
    .orderBy('book.id', 'desc'),
);
