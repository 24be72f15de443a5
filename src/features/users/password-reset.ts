import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError } from '../../core/errors.ts';
import { hasSecretShape } from '../../core/ids.ts';
import { randomSecret, sha256Hex } from '../../platform/crypto.ts';
import {
  admitAttempt,
  attemptChecks,
  forgiveAttempts,
  THROTTLES,
} from '../../platform/http/attempt-throttle.ts';
import type { Mailer } from '../../platform/mail/mailer.ts';
import { enqueueMail } from '../../platform/mail/outbox.ts';
import { resetMail } from './reset-mail.tsx';
import { hashPassword, type Origin, type UsersDeps } from './service.ts';
import * as store from './store.ts';

// A way back for an owner locked out of their books: a link by mail that sets a new password.
// The link carries a secret shown nowhere else (stored as its hash), works once and for 30
// minutes. Asking answers the same whether or not the address has an account, and the mail is
// sent after the answer, so neither the words nor the timing tell who is a user.

export const RESET_PREFIX = 'pwr_';
export const RESET_LIFETIME_MS = 30 * 60 * 1000;

export type ResetDeps = UsersDeps & { mailer: Mailer; publicUrl: string; logger?: Logger | undefined };

export function resetLink(publicUrl: string, token: string): string {
  return `${publicUrl}/app/reset-password?token=${encodeURIComponent(token)}`;
}

/**
 * Records a reset and queues its link's mail when the address has an account. Throttled per
 * address typed and per client address, so nobody can flood an inbox. The reset and its mail
 * commit together; the mail worker sends it after commit (mail_outbox), so the answer neither
 * waits for the mail server nor tells by its timing whether the address has an account.
 */
export async function requestPasswordReset(deps: ResetDeps, email: string, origin: Origin): Promise<void> {
  await admitAttempt(
    deps.db,
    deps.clock,
    attemptChecks([THROTTLES.resetAddress, origin.clientAddress], [THROTTLES.resetAccount, email]),
    'password reset',
  );
  const user = await store.findUserByEmail(deps.db, email);
  if (!user) return;
  if (!deps.mailer.available) {
    // A link nobody can receive is not worth recording; the operator is told why none left.
    deps.logger?.warn({ userId: user.id }, 'no password reset mail: no mail transport is configured');
    return;
  }
  const token = randomSecret(RESET_PREFIX);
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (tx) => {
    await store.insertPasswordReset(tx, {
      id: randomUUID(),
      userId: user.id,
      tokenHash: sha256Hex(token),
      at: now,
      expiresAt: new Date(now.getTime() + RESET_LIFETIME_MS),
    });
    await enqueueMail(tx, deps.clock, deps.mailer.from, {
      spaceId: null,
      ...resetMail(user.email, resetLink(deps.publicUrl, token)),
    });
  });
}

const refusedLink = () =>
  new AppError(
    'invalid_request',
    'This reset link is unknown, used or older than 30 minutes; ask for a new one.',
    {
      field: 'token',
    },
  );

/**
 * Sets the new password if the link is live, using it up; every session of the account is
 * signed out and its login count forgotten, so the owner can log in at once.
 */
export async function confirmPasswordReset(deps: UsersDeps, token: string, password: string): Promise<void> {
  if (!hasSecretShape(token, RESET_PREFIX)) throw refusedLink();
  const passwordHash = await hashPassword(password);
  const email = await deps.db.transaction().execute(async (tx) => {
    const now = deps.clock.now();
    const userId = await store.useLiveReset(tx, sha256Hex(token), now);
    if (userId === undefined) throw refusedLink();
    await store.replacePassword(tx, userId, passwordHash, now);
    return (await store.findUserById(tx, userId))?.email;
  });
  if (email !== undefined) await forgiveAttempts(deps.db, THROTTLES.loginAccount, email);
}

/** What a reset link is now: `live` can set a password; the others say why it cannot. */
export type ResetLinkState = 'live' | 'used' | 'expired' | 'unknown';

/** Reads a link's state without using it (the page asks before a person types a password). */
export async function resetLinkState(deps: UsersDeps, token: string): Promise<ResetLinkState> {
  if (!hasSecretShape(token, RESET_PREFIX)) return 'unknown';
  const reset = await store.findResetByHash(deps.db, sha256Hex(token));
  if (!reset) return 'unknown';
  if (reset.used_at !== null) return 'used';
  return new Date(reset.expires_at).getTime() > deps.clock.now().getTime() ? 'live' : 'expired';
}
