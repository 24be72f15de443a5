import type { Queryable } from '../../platform/db/database.ts';

export async function insertUser(
  db: Queryable,
  user: { id: string; email: string; name: string; passwordHash: string; at: Date },
) {
  await db
    .insertInto('users')
    .values({
      id: user.id,
      email: user.email,
      name: user.name,
      password_hash: user.passwordHash,
      created_at: user.at,
    })
    .execute();
}

export function findUserByEmail(db: Queryable, email: string) {
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst();
}

export function findUserById(db: Queryable, id: string) {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertSession(
  db: Queryable,
  session: { id: string; userId: string; tokenHash: string; csrfToken: string; at: Date; expiresAt: Date },
) {
  await db
    .insertInto('sessions')
    .values({
      id: session.id,
      user_id: session.userId,
      token_hash: session.tokenHash,
      csrf_token: session.csrfToken,
      created_at: session.at,
      expires_at: session.expiresAt,
    })
    .execute();
}

/** A session still in force, with its user's name and email (the web app's shell shows them). */
export function findLiveSession(db: Queryable, tokenHash: string, now: Date) {
  return db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select([
      'sessions.id',
      'sessions.user_id',
      'sessions.csrf_token',
      'sessions.expires_at',
      'users.name as user_name',
      'users.email as user_email',
    ])
    .where('sessions.token_hash', '=', tokenHash)
    .where('sessions.revoked_at', 'is', null)
    .where('sessions.expires_at', '>', now)
    .executeTakeFirst();
}

export async function revokeSession(db: Queryable, sessionId: string, now: Date) {
  await db.updateTable('sessions').set({ revoked_at: now }).where('id', '=', sessionId).execute();
}

export async function insertPasswordReset(
  db: Queryable,
  reset: { id: string; userId: string; tokenHash: string; at: Date; expiresAt: Date },
) {
  await db
    .insertInto('password_resets')
    .values({
      id: reset.id,
      user_id: reset.userId,
      token_hash: reset.tokenHash,
      created_at: reset.at,
      expires_at: reset.expiresAt,
    })
    .execute();
}

/** A reset by its token's hash, to tell a person why a link no longer works. */
export async function findResetByHash(db: Queryable, tokenHash: string) {
  return db
    .selectFrom('password_resets')
    .select(['used_at', 'expires_at'])
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Uses a live reset exactly once: of two concurrent uses, only one gets the user id. */
export async function useLiveReset(db: Queryable, tokenHash: string, now: Date) {
  const row = await db
    .updateTable('password_resets')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('user_id')
    .executeTakeFirst();
  return row?.user_id;
}

/** A new password ends every other way in: open resets and live sessions. */
export async function replacePassword(db: Queryable, userId: string, passwordHash: string, now: Date) {
  await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', userId).execute();
  await db
    .updateTable('password_resets')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
  await db
    .updateTable('sessions')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
}
