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

export function findLiveSession(db: Queryable, tokenHash: string, now: Date) {
  return db
    .selectFrom('sessions')
    .select(['id', 'user_id', 'csrf_token', 'expires_at'])
    .where('token_hash', '=', tokenHash)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

export async function revokeSession(db: Queryable, sessionId: string, now: Date) {
  await db.updateTable('sessions').set({ revoked_at: now }).where('id', '=', sessionId).execute();
}
