import ipaddr from 'ipaddr.js';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import type { Db } from '../db/database.ts';
import type { ThrottleScope } from '../db/schema.ts';

// Guessing passwords, opening accounts in bulk and mail-bombing through password resets are
// slowed per subject (an account's email or a client address). Every attempt counts; after a
// scope's free allowance each further attempt pushes the next one out by an exponential
// back-off (1 s, 2 s, 4 s … capped at BACKOFF_CAP_SECONDS), so an attacker gets a handful of
// guesses an hour while the owner, once the back-off has passed, is let in again (and a
// password reset clears the account's count). An hour without attempts starts the count over.
// Counters live in PostgreSQL, so every process sees the same numbers.

export const BACKOFF_CAP_SECONDS = 300;
export const QUIET_MS = 60 * 60 * 1000;

export type ThrottlePolicy = { scope: ThrottleScope; free: number };

export const THROTTLES = {
  loginAccount: { scope: 'login-account', free: 5 },
  loginAddress: { scope: 'login-address', free: 30 },
  signupAddress: { scope: 'signup-address', free: 10 },
  resetAccount: { scope: 'reset-account', free: 3 },
  resetAddress: { scope: 'reset-address', free: 10 },
} as const satisfies Record<string, ThrottlePolicy>;

export type ThrottleRow = { attempts: number; locked_until: Date | null; updated_at: Date };
export type AttemptDecision =
  | { admitted: true; attempts: number; lockedUntil: Date | null }
  | { admitted: false; retryAfterSeconds: number };

/** Seconds the next attempt must wait after the attempt numbered `attempts` (0 within the allowance). */
export function backoffSeconds(attempts: number, free: number): number {
  if (attempts < free) return 0;
  const doublings = attempts - free;
  return doublings >= 9 ? BACKOFF_CAP_SECONDS : Math.min(BACKOFF_CAP_SECONDS, 2 ** doublings);
}

/** Pure: whether an attempt is admitted now, and the count and lock it leaves behind. */
export function decideAttempt(
  row: ThrottleRow | undefined,
  now: Date,
  policy: ThrottlePolicy,
): AttemptDecision {
  if (row?.locked_until && row.locked_until.getTime() > now.getTime()) {
    return {
      admitted: false,
      retryAfterSeconds: Math.ceil((row.locked_until.getTime() - now.getTime()) / 1000),
    };
  }
  const quiet = row === undefined || now.getTime() - row.updated_at.getTime() > QUIET_MS;
  const attempts = (quiet ? 0 : row.attempts) + 1;
  const waitSeconds = backoffSeconds(attempts, policy.free);
  return {
    admitted: true,
    attempts,
    lockedUntil: waitSeconds > 0 ? new Date(now.getTime() + waitSeconds * 1000) : null,
  };
}

/**
 * Counts an attempt for every subject, or refuses it (nothing counted for a locked subject).
 * Each subject's row is locked while it is decided, so concurrent attempts are counted one by
 * one and none slips past a lock another has just set.
 */
async function admitOne(
  db: Db,
  clock: Clock,
  policy: ThrottlePolicy,
  subject: string,
): Promise<AttemptDecision> {
  return db.transaction().execute(async (tx) => {
    const now = clock.now();
    await tx
      .insertInto('attempt_throttles')
      .values({ scope: policy.scope, subject, attempts: 0, locked_until: null, updated_at: now })
      .onConflict((conflict) => conflict.columns(['scope', 'subject']).doNothing())
      .execute();
    const row = await tx
      .selectFrom('attempt_throttles')
      .select(['attempts', 'locked_until', 'updated_at'])
      .where('scope', '=', policy.scope)
      .where('subject', '=', subject)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const fresh = row.attempts === 0 && row.locked_until === null;
    const decision = decideAttempt(fresh ? undefined : row, now, policy);
    if (decision.admitted) {
      await tx
        .updateTable('attempt_throttles')
        .set({ attempts: decision.attempts, locked_until: decision.lockedUntil, updated_at: now })
        .where('scope', '=', policy.scope)
        .where('subject', '=', subject)
        .execute();
    }
    return decision;
  });
}

/** Subjects are compared case-blind and bounded (the column holds 320 characters). */
export function throttleSubject(text: string): string {
  return text.trim().toLowerCase().slice(0, 320) || '-';
}

/**
 * Loopback is this machine: a reverse proxy on the same host (set TRUST_PROXY so the client's
 * own address is seen) or an operator's script. Counting it would throttle every client at once,
 * so address throttles skip it; the account throttles still apply.
 */
export function isCountedAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  const parsed = ipaddr.process(address);
  return parsed.range() !== 'loopback';
}

/** The throttles of one attempt: the account's always, the client address's unless loopback. */
export function attemptChecks(
  address: [ThrottlePolicy, string],
  account?: [ThrottlePolicy, string],
): [ThrottlePolicy, string][] {
  const checks: [ThrottlePolicy, string][] = isCountedAddress(address[1]) ? [address] : [];
  return account ? [...checks, account] : checks;
}

/**
 * Admits an attempt against each (policy, subject) pair, or throws 429 `rate_limited` with
 * Retry-After set to the longest wait.
 */
export async function admitAttempt(
  db: Db,
  clock: Clock,
  checks: [ThrottlePolicy, string][],
  what: string,
): Promise<void> {
  let waitSeconds = 0;
  for (const [policy, subject] of checks) {
    const decision = await admitOne(db, clock, policy, throttleSubject(subject));
    if (!decision.admitted) waitSeconds = Math.max(waitSeconds, decision.retryAfterSeconds);
  }
  if (waitSeconds > 0) {
    throw new AppError('rate_limited', `Too many ${what} attempts; try again in ${waitSeconds} seconds.`, {
      retry_after_seconds: waitSeconds,
    });
  }
}

/** Forgets a subject's attempts (a successful login for the account, a completed reset). */
export async function forgiveAttempts(db: Db, policy: ThrottlePolicy, subject: string): Promise<void> {
  await db
    .deleteFrom('attempt_throttles')
    .where('scope', '=', policy.scope)
    .where('subject', '=', throttleSubject(subject))
    .execute();
}

/**
 * Takes back one counted attempt that turned out well (a correct password from an address),
 * so a busy office behind one address is slowed only by its failures.
 */
export async function creditAttempt(db: Db, policy: ThrottlePolicy, subject: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const row = await tx
      .selectFrom('attempt_throttles')
      .select(['attempts'])
      .where('scope', '=', policy.scope)
      .where('subject', '=', throttleSubject(subject))
      .forUpdate()
      .executeTakeFirst();
    if (!row) return;
    const attempts = Math.max(0, row.attempts - 1);
    const update = attempts < policy.free ? { attempts, locked_until: null } : { attempts };
    await tx
      .updateTable('attempt_throttles')
      .set(update)
      .where('scope', '=', policy.scope)
      .where('subject', '=', throttleSubject(subject))
      .execute();
  });
}

/** Drops rows whose count has gone quiet and whose lock has passed; run by housekeeping. */
export async function pruneAttemptThrottles(db: Db, clock: Clock): Promise<number> {
  const before = new Date(clock.now().getTime() - QUIET_MS - BACKOFF_CAP_SECONDS * 1000);
  const result = await db.deleteFrom('attempt_throttles').where('updated_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
