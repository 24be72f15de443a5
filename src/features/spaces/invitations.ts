import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.ts';
import { PAGE_SIZE } from '../../core/cursor.ts';
import { AppError } from '../../core/errors.ts';
import { hasSecretShape } from '../../core/ids.ts';
import type { Role } from '../../core/roles.ts';
import { randomSecret, sha256Hex } from '../../platform/crypto.ts';
import type { Db } from '../../platform/db/database.ts';
import type { Mailer } from '../../platform/mail/mailer.ts';
import { enqueueMail } from '../../platform/mail/outbox.ts';
import { getUser } from '../users/index.ts';
import { canSetRole } from './domain.ts';
import { invitationMail } from './invitation-mail.tsx';
import * as invitations from './invitations-store.ts';
import { requireAdministrator, requireMember } from './service.ts';
import * as store from './store.ts';

// Invitations: an owner or admin invites an address with a role; the mailed link (a secret
// stored as its hash, like session and reset tokens) lets whoever holds it join once, within 7
// days, signed in or after signing up. Pending invitations are listed and can be revoked.

export const INVITATION_PREFIX = 'inv_';
export const INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;

export type InvitationDeps = {
  db: Db;
  clock: Clock;
  mailer: Mailer;
  publicUrl: string;
  logger?: Logger | undefined;
};

export function invitationLink(publicUrl: string, token: string): string {
  return `${publicUrl}/app/invitation?token=${encodeURIComponent(token)}`;
}

type PendingRow = Awaited<ReturnType<typeof invitations.listPendingInvitations>>[number];
const presentInvitation = (row: PendingRow) => ({
  id: row.id,
  email: row.email,
  role: row.role,
  invited_by: row.invited_by,
  created_at: row.created_at.toISOString(),
  expires_at: row.expires_at.toISOString(),
});

/**
 * Records an invitation and queues its mail in one transaction (the mail leaves after commit).
 * Inviting an address again revokes its earlier pending invitations, so one link is live.
 */
export async function inviteMember(
  deps: InvitationDeps,
  actorId: string,
  spaceId: string,
  input: { email: string; role: Role },
) {
  const actorRole = await requireAdministrator(deps.db, spaceId, actorId);
  if (!canSetRole(actorRole, null, input.role))
    throw new AppError('forbidden', 'Only an owner can invite an owner.', { field: 'role' });
  if (!deps.mailer.available) {
    throw new AppError(
      'delivery_unavailable',
      'No mail server is configured, so an invitation cannot be sent; add the person as a member instead.',
    );
  }
  const email = input.email.trim();
  const existing = await store.findMemberByEmail(deps.db, spaceId, email);
  if (existing) throw new AppError('conflict', 'This person is already a member.', { field: 'email' });
  const [space, inviter] = await Promise.all([store.findSpace(deps.db, spaceId), getUser(deps, actorId)]);
  const token = randomSecret(INVITATION_PREFIX);
  const now = deps.clock.now();
  const row = {
    id: randomUUID(),
    spaceId,
    email,
    role: input.role,
    tokenHash: sha256Hex(token),
    invitedBy: actorId,
    at: now,
    expiresAt: new Date(now.getTime() + INVITATION_LIFETIME_MS),
  };
  await deps.db.transaction().execute(async (tx) => {
    await invitations.revokeInvitations(tx, spaceId, { email }, now);
    await invitations.insertInvitation(tx, row);
    await enqueueMail(tx, deps.clock, deps.mailer.from, {
      spaceId,
      ...invitationMail(email, {
        spaceName: space?.name ?? 'a space',
        inviter: inviter.name === '' ? inviter.email : inviter.name,
        role: input.role,
        link: invitationLink(deps.publicUrl, token),
      }),
    });
  });
  return presentInvitation({
    id: row.id,
    email,
    role: input.role,
    invited_by: actorId,
    created_at: now,
    expires_at: row.expiresAt,
  });
}

/** The space's pending invitations, the newest first (owners and admins). */
export async function listInvitations(deps: InvitationDeps, actorId: string, spaceId: string) {
  await requireAdministrator(deps.db, spaceId, actorId);
  const rows = await invitations.listPendingInvitations(deps.db, spaceId, deps.clock.now(), PAGE_SIZE);
  return { items: rows.map(presentInvitation) };
}

/** Revokes a pending invitation; its link stops working. An admin cannot revoke an owner's. */
export async function revokeInvitation(
  deps: InvitationDeps,
  actorId: string,
  spaceId: string,
  invitationId: string,
) {
  const actorRole = await requireAdministrator(deps.db, spaceId, actorId);
  await deps.db.transaction().execute(async (tx) => {
    const now = deps.clock.now();
    const found = await invitations.lockPendingInvitation(tx, spaceId, invitationId, now);
    if (!found) throw new AppError('not_found', 'No pending invitation with this id.');
    if (!canSetRole(actorRole, null, found.role))
      throw new AppError('forbidden', 'Only an owner can revoke an invitation to be owner.');
    await invitations.revokeInvitations(tx, spaceId, { id: invitationId }, now);
  });
}

/** What an invitation link is now: `live` can be accepted; the others say why it cannot. */
export type InvitationState = 'live' | 'accepted' | 'revoked' | 'expired' | 'unknown';

/** Reads a link without using it: its state and, for a live one, what it offers. */
export async function invitationState(deps: Pick<InvitationDeps, 'db' | 'clock'>, token: string) {
  const found = hasSecretShape(token, INVITATION_PREFIX)
    ? await invitations.findInvitationByHash(deps.db, sha256Hex(token))
    : undefined;
  if (!found) return { state: 'unknown' as InvitationState };
  let state: InvitationState = 'live';
  if (found.accepted_at !== null) state = 'accepted';
  else if (found.revoked_at !== null) state = 'revoked';
  else if (found.expires_at.getTime() <= deps.clock.now().getTime()) state = 'expired';
  return { state, email: found.email, role: found.role, space_name: found.space_name };
}

const REFUSALS: Record<Exclude<InvitationState, 'live'>, string> = {
  unknown: 'This invitation link is unknown; ask for a new one.',
  accepted: 'This invitation was used already; ask for a new one.',
  revoked: 'This invitation was revoked; ask for a new one.',
  expired: 'This invitation is older than 7 days; ask for a new one.',
};

/**
 * The signed-in person joins the space with the invited role. The link is used in one guarded
 * update with the membership in its transaction: a refused join leaves the link unused.
 */
export async function acceptInvitation(
  deps: Pick<InvitationDeps, 'db' | 'clock'>,
  userId: string,
  token: string,
) {
  const joined = hasSecretShape(token, INVITATION_PREFIX)
    ? await deps.db.transaction().execute(async (tx) => {
        const now = deps.clock.now();
        const used = await invitations.useLiveInvitation(tx, sha256Hex(token), userId, now);
        if (!used) return undefined;
        if (await store.findRole(tx, used.space_id, userId)) {
          throw new AppError('conflict', 'You are a member of this space already.');
        }
        await store.insertMember(tx, { spaceId: used.space_id, userId, role: used.role, at: now });
        return used;
      })
    : undefined;
  if (!joined) {
    const { state } = await invitationState(deps, token);
    const reason = state === 'live' ? 'unknown' : state;
    throw new AppError('invalid_request', REFUSALS[reason], { field: 'token', reason });
  }
  const member = await requireMember(deps.db, joined.space_id, userId);
  return { space_id: member.spaceId, role: member.role };
}
