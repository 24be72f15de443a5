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
import { findPrincipals, markUsed } from './store.ts';

// A key's last use is written at most this often per key and process.
const LAST_USE_EVERY_MS = 60_000;

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

type Counted = { principal: Principal | undefined; decision: RateDecision | undefined };
/** Reads a key by its hash and counts its call: the key (when live) and the rate decision. */
type Counter = (hash: string) => Promise<Counted>;

function refuse(code: string, scope: Scope | 'any'): never {
  if (code === 'unauthorized') throw new AppError('unauthorized', UNAUTHORIZED);
  if (code === 'missing_scope') {
    throw new AppError('missing_scope', `This key lacks the ${scope} scope that this route needs.`, {
      scope,
    });
  }
  throw new AppError(code as 'not_a_member' | 'not_found', DOOR_DETAILS[code] ?? 'Refused.');
}

function principalLoader(db: Db) {
  return createBatcher(async (hashes: string[]) => {
    const found = await findPrincipals(db, [...new Set(hashes)]);
    return hashes.map((hash) => found.get(hash));
  });
}

/** The key when it is live now, else nothing. */
function liveOnly(principal: Principal | undefined, clock: Clock) {
  return principal && isKeyLive(principal, clock.now()) ? principal : undefined;
}

function remember<V>(map: Map<string, V>, key: string, value: V) {
  map.delete(key);
  const oldest = map.keys().next();
  if (map.size >= CACHE_ENTRIES_MAX && !oldest.done) map.delete(oldest.value);
  map.set(key, value);
}

/**
 * Without Redis: the key is read live on every call, and only a live key's calls are counted. A
 * key's id never changes, so once a key has been seen live its call is counted while the key
 * itself is read: the two round trips overlap. A call counted for a key the read then finds dead
 * costs that dead key one count, and nothing else.
 */
function liveCounter(deps: DoorDeps): Counter {
  const load = principalLoader(deps.db);
  const live = (principal: Principal | undefined) => liveOnly(principal, deps.clock);
  const keyIds = new Map<string, string>();
  return async (hash) => {
    const knownId = keyIds.get(hash);
    if (knownId !== undefined) {
      const [principal, { decision }] = await Promise.all([load(hash), deps.limiter.hit({ keyId: knownId })]);
      return { principal: live(principal), decision };
    }
    const principal = live(await load(hash));
    if (!principal) return { principal, decision: undefined };
    remember(keyIds, hash, principal.keyId);
    return { principal, decision: (await deps.limiter.hit({ keyId: principal.keyId })).decision };
  };
}

/** With Redis: the cached key, reloaded when its space's auth stamp says it may be stale. */
function cachedCounter(deps: DoorDeps): Counter {
  const loadBatch = principalLoader(deps.db);
  const cache = new Map<string, Principal>();
  const live = (principal: Principal | undefined) => liveOnly(principal, deps.clock);
  const load = async (hash: string): Promise<Principal | undefined> => {
    const principal = await loadBatch(hash);
    cache.delete(hash);
    if (principal) {
      remember(cache, hash, principal);
      await deps.authStamps.seed(principal.spaceId, principal.authVersion);
    }
    return principal;
  };
  return async (hash) => {
    const cached = cache.get(hash);
    let principal = cached ?? (await load(hash));
    // A cached record may be older than a change that revived the key (an issuer promoted back),
    // so a refusal is only ever decided on what the database says now.
    if (cached && !live(cached)) principal = await load(hash);
    const current = live(principal);
    if (!current) return { principal: undefined, decision: undefined };
    const { decision, stamp } = await deps.limiter.hit({
      keyId: current.keyId,
      stampKey: deps.authStamps.key(current.spaceId),
    });
    if (stamp !== String(current.authVersion)) principal = await load(hash);
    return { principal, decision };
  };
}

export function createKeyDoor(deps: DoorDeps) {
  const count = deps.authStamps.enabled ? cachedCounter(deps) : liveCounter(deps);
  const lastWritten = new Map<string, number>();

  async function noteUse(keyId: string) {
    const now = deps.clock.now();
    const last = lastWritten.get(keyId);
    if (last !== undefined && now.getTime() - last < LAST_USE_EVERY_MS) return;
    remember(lastWritten, keyId, now.getTime());
    await markUsed(deps.db, keyId, now);
  }

  /** Admits one call to a route behind `scope`, or throws the refusal the spec prescribes. */
  async function admit(authorization: string | undefined, scope: Scope | 'any'): Promise<Admission> {
    if (!authorization)
      throw new AppError('unauthorized', 'Send the integration key as Authorization: Bearer <key>.');
    const token = authorization.startsWith('Bearer ') ? authorization.slice(7).trim() : '';
    if (!hasSecretShape(token, SECRET_PREFIX.integrationKey))
      throw new AppError('unauthorized', UNAUTHORIZED);
    const hash = sha256Hex(token);
    const { principal, decision } = await count(hash);
    if (!principal || !decision) return refuse('unauthorized', scope);
    const verdict = judge(principal, deps.clock.now(), scope);
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
    const caller = (verdict as { caller: IntegrationCaller }).caller;
    await noteUse(caller.keyId);
    return { caller, rate: decision };
  }

  return { admit };
}

export type KeyDoor = ReturnType<typeof createKeyDoor>;
