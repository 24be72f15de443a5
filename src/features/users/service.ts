import { randomUUID } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { hasSecretShape, SECRET_PREFIX } from '../../core/ids.ts';
import { randomSecret, sha256Hex } from '../../platform/crypto.ts';
import type { Db } from '../../platform/db/database.ts';
import {
  admitAttempt,
  attemptChecks,
  creditAttempt,
  forgiveAttempts,
  THROTTLES,
} from '../../platform/http/attempt-throttle.ts';
import * as store from './store.ts';

const SESSION_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;
// A fixed hash to verify against when the email is unknown, so both failures take as long.
let decoyHash: Promise<string> | undefined;

export type UsersDeps = { db: Db; clock: Clock };

/** Where a request came from: the throttles count per client address. */
export type Origin = { clientAddress: string };

export type NewSession = { sessionToken: string; csrfToken: string; expiresAt: Date };

export function hashPassword(password: string): Promise<string> {
  // The library's default algorithm is argon2id (checked by a test), with its recommended cost.
  return hash(password);
}

async function openSession(deps: UsersDeps, userId: string): Promise<NewSession> {
  const sessionToken = randomSecret(SECRET_PREFIX.session);
  const csrfToken = randomSecret('csrf_');
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + SESSION_LIFETIME_MS);
  await store.insertSession(deps.db, {
    id: randomUUID(),
    userId,
    tokenHash: sha256Hex(sessionToken),
    csrfToken,
    at: now,
    expiresAt,
  });
  return { sessionToken, csrfToken, expiresAt };
}

export async function createUser(deps: UsersDeps, input: { email: string; password: string; name: string }) {
  if (await store.findUserByEmail(deps.db, input.email)) {
    throw new AppError('conflict', 'An account with this email already exists; log in instead.', {
      field: 'email',
    });
  }
  const user = { id: randomUUID(), email: input.email.trim(), name: input.name, at: deps.clock.now() };
  try {
    await store.insertUser(deps.db, { ...user, passwordHash: await hashPassword(input.password) });
  } catch (error) {
    // Two signups with one email at once: the unique index decides, the loser is told plainly.
    if (String((error as { code?: string }).code) === '23505') {
      throw new AppError('conflict', 'An account with this email already exists; log in instead.', {
        field: 'email',
      });
    }
    throw error;
  }
  return { id: user.id, email: user.email, name: user.name, created_at: user.at };
}

export async function signup(
  deps: UsersDeps,
  input: { email: string; password: string; name: string },
  origin: Origin,
) {
  await admitAttempt(
    deps.db,
    deps.clock,
    attemptChecks([THROTTLES.signupAddress, origin.clientAddress]),
    'signup',
  );
  const user = await createUser(deps, input);
  return { user, session: await openSession(deps, user.id) };
}

/**
 * Every login attempt is counted per account (the email as typed, so unknown addresses are
 * throttled alike) and per client address before the password is checked; a correct password
 * forgets the account's count and takes the attempt back from the address.
 */
export async function login(
  deps: UsersDeps,
  input: { email: string; password: string },
  origin: Origin,
): Promise<NewSession> {
  await admitAttempt(
    deps.db,
    deps.clock,
    attemptChecks([THROTTLES.loginAddress, origin.clientAddress], [THROTTLES.loginAccount, input.email]),
    'login',
  );
  const user = await store.findUserByEmail(deps.db, input.email);
  decoyHash ??= hashPassword('decoy-password-for-timing');
  const matches = await verify(user?.password_hash ?? (await decoyHash), input.password);
  if (!user || !matches) throw new AppError('unauthorized', 'The email or password is wrong.');
  await forgiveAttempts(deps.db, THROTTLES.loginAccount, input.email);
  await creditAttempt(deps.db, THROTTLES.loginAddress, origin.clientAddress);
  return openSession(deps, user.id);
}

/** How a session token is looked up: its SHA-256; undefined for a token not of a session's shape. */
export function sessionTokenHash(token: string): string | undefined {
  return hasSecretShape(token, SECRET_PREFIX.session) ? sha256Hex(token) : undefined;
}

export async function resolveSession(deps: UsersDeps, token: string) {
  const tokenHash = sessionTokenHash(token);
  if (tokenHash === undefined) return undefined;
  return store.findLiveSession(deps.db, tokenHash, deps.clock.now());
}

export async function logout(deps: UsersDeps, sessionId: string) {
  await store.revokeSession(deps.db, sessionId, deps.clock.now());
}

export async function getUser(deps: UsersDeps, userId: string) {
  const user = await store.findUserById(deps.db, userId);
  if (!user) throw new AppError('not_found', 'No such user.');
  return { id: user.id, email: user.email, name: user.name, created_at: user.created_at };
}

export function findUserIdByEmail(deps: UsersDeps, email: string) {
  return store.findUserByEmail(deps.db, email).then((user) => user?.id);
}
