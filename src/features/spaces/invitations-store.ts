import type { Queryable } from '../../platform/db/database.ts';
import type { Role } from '../../platform/db/schema.ts';

// The space_invitations table: invitations to join a space, answered once through their link.

export type NewInvitation = {
  id: string;
  spaceId: string;
  email: string;
  role: Role;
  tokenHash: string;
  invitedBy: string;
  at: Date;
  expiresAt: Date;
};

export async function insertInvitation(db: Queryable, invitation: NewInvitation) {
  await db
    .insertInto('space_invitations')
    .values({
      id: invitation.id,
      space_id: invitation.spaceId,
      email: invitation.email,
      role: invitation.role,
      token_hash: invitation.tokenHash,
      invited_by: invitation.invitedBy,
      created_at: invitation.at,
      expires_at: invitation.expiresAt,
    })
    .execute();
}

const PENDING_COLUMNS = ['id', 'email', 'role', 'invited_by', 'created_at', 'expires_at'] as const;

/** The space's invitations neither accepted, revoked nor expired at `now`, the newest first. */
export function listPendingInvitations(db: Queryable, spaceId: string, now: Date, limit: number) {
  return db
    .selectFrom('space_invitations')
    .select(PENDING_COLUMNS)
    .where('space_id', '=', spaceId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** One pending invitation of the space, locked until the caller's transaction ends. */
export function lockPendingInvitation(db: Queryable, spaceId: string, invitationId: string, now: Date) {
  return db
    .selectFrom('space_invitations')
    .select(PENDING_COLUMNS)
    .where('space_id', '=', spaceId)
    .where('id', '=', invitationId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .forUpdate()
    .executeTakeFirst();
}

/** Revokes the pending invitations of a space: one by id, or every one to an address. */
export async function revokeInvitations(
  db: Queryable,
  spaceId: string,
  which: { id: string } | { email: string },
  now: Date,
) {
  let query = db
    .updateTable('space_invitations')
    .set({ revoked_at: now })
    .where('space_id', '=', spaceId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null);
  query =
    'id' in which
      ? query.where('id', '=', which.id)
      : query.where((eb) => eb(eb.fn('lower', ['email']), '=', which.email.toLowerCase()));
  await query.execute();
}

/**
 * Uses a live invitation in one guarded update, so of two uses at once only one wins; answers
 * the space and role it grants, or undefined when the link is unknown, used, revoked or expired.
 */
export function useLiveInvitation(db: Queryable, tokenHash: string, userId: string, now: Date) {
  return db
    .updateTable('space_invitations')
    .set({ accepted_at: now, accepted_by: userId })
    .where('token_hash', '=', tokenHash)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['id', 'space_id', 'role'])
    .executeTakeFirst();
}

export function findInvitationByHash(db: Queryable, tokenHash: string) {
  return db
    .selectFrom('space_invitations')
    .innerJoin('spaces', 'spaces.id', 'space_invitations.space_id')
    .select([
      'space_invitations.email',
      'space_invitations.role',
      'space_invitations.expires_at',
      'space_invitations.accepted_at',
      'space_invitations.revoked_at',
      'spaces.name as space_name',
    ])
    .where('space_invitations.token_hash', '=', tokenHash)
    .executeTakeFirst();
}
