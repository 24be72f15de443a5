import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { hasSecretShape, SECRET_PREFIX } from '../../core/ids.ts';
import type { AuthStamps } from '../../platform/auth-stamps.ts';
import { createBatcher } from '../../platform/batch.ts';
import { sha256Hex } from '../../platform/crypto.ts';
import type { Db } from '../../platform/db/database.ts';
import type { IntegrationCaller, Scope } from '../../platform/http/context.ts';
import type { RateDecision, RateLimiter } from '../../platform/http/rate-limit.ts';
import { isKeyLive, judge, type Principal } from './domain.ts';
import { findPrincipals } from './store.ts';

// The door of /integration. Without Redis every call reads its key live from PostgreSQL (in a
// batch shared with the other calls of the moment), so a revocation stops the very next call.
// With Redis, keys are cached in this process and each call's rate-counter round trip also
// reads the space's auth stamp; a stamp that differs from the cached version, or is missing,
// makes the door reload the key from PostgreSQL before deciding (see platform/auth-stamps.ts).

const UNAUTHORIZED =
  'The integration key is unknown, revoked or expired, or its issuer can no longer use it.';
const DOOR_DETAILS: Record<string, string> = {
  not_a_member: 'Not a member of this space',
  not_found: 'No such route for this space.',
};
const CACHE_ENTRIES_MAX = 10_000;

export type DoorDeps = { db: Db; clock: Clock; limiter: RateLimiter; authStamps: AuthStamps };
export type Admission = { caller: IntegrationCaller; rate: RateDecision };

export function createKeyDoor(deps: DoorDeps) {
  const loadBatch = createBatcher(async (hashes: string[]) => {
    const found = await findPrincipals(deps.db, [...new Set(hashes)]);
    return hashes.map((hash) => found.get(hash));
  });
  const cache = new Map<string, Principal>();

  const load = async (hash: string): Promise<Principal | undefined> => {
    const principal = await loadBatch(hash);
    if (!deps.authStamps.enabled) return principal;
    cache.delete(hash);
    if (principal) {
      if (cache.size >= CACHE_ENTRIES_MAX) cache.delete(cache.keys().next().value!);
      cache.set(hash, principal);
      await deps.authStamps.seed(principal.spaceId, principal.authVersion);
    }
    return principal;
  };

  const refuse = (code: string, scope: Scope | 'any'): never => {
    if (code === 'unauthorized') throw new AppError('unauthorized', UNAUTHORIZED);
    if (code === 'missing_scope') {
      throw new AppError('missing_scope', `This key lacks the ${scope} scope that this route needs.`, {
        scope,
      });
    }
    throw new AppError(code as 'not_a_member' | 'not_found', DOOR_DETAILS[code] ?? 'Refused.');
  };

  /** Admits one call to a route behind `scope`, or throws the refusal the spec prescribes. */
  async function admit(authorization: string | undefined, scope: Scope | 'any'): Promise<Admission> {
    if (!authorization)
      throw new AppError('unauthorized', 'Send the integration key as Authorization: Bearer <key>.');
    const token = authorization.startsWith('Bearer ') ? authorization.slice(7).trim() : '';
    if (!hasSecretShape(token, SECRET_PREFIX.integrationKey))
      throw new AppError('unauthorized', UNAUTHORIZED);
    const hash = sha256Hex(token);
    const cached = deps.authStamps.enabled ? cache.get(hash) : undefined;
    let principal = cached ?? (await load(hash));
    // A cached record may be older than a change that revived the key (an issuer promoted back),
    // so a refusal is only ever decided on what the database says now.
    if (cached && !isKeyLive(cached, deps.clock.now())) principal = await load(hash);
    if (!principal || !isKeyLive(principal, deps.clock.now())) refuse('unauthorized', scope);
    const { decision, stamp } = await deps.limiter.hit({
      keyId: principal!.keyId,
      stampKey: deps.authStamps.enabled ? deps.authStamps.key(principal!.spaceId) : undefined,
    });
    if (deps.authStamps.enabled && stamp !== String(principal!.authVersion)) {
      principal = await load(hash);
      if (!principal) refuse('unauthorized', scope);
    }
    const verdict = judge(principal!, deps.clock.now(), scope);
    if (!verdict.ok) refuse(verdict.code, scope);
    if (!decision.allowed) {
      throw new AppError(
        'rate_limited',
        `More than ${decision.limit} calls in a minute on this key; retry after the wait.`,
        {
          retry_after_seconds: decision.resetSeconds,
          limit: decision.limit,
        },
      );
    }
    return { caller: (verdict as { caller: IntegrationCaller }).caller, rate: decision };
  }

  return { admit };
}

export type KeyDoor = ReturnType<typeof createKeyDoor>;
