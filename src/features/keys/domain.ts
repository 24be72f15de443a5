import { DAY_MS } from '../../core/clock.ts';
import type { ErrorCode } from '../../core/errors.ts';
import { canWrite } from '../../core/roles.ts';
import type { Role } from '../../platform/db/schema.ts';
import type { IntegrationCaller, Scope } from '../../platform/http/context.ts';

export const KEYS_PER_SPACE_MAX = 10;
export const LIFETIME_DAYS = [30, 90, 180, 365] as const;
export type LifetimeDays = (typeof LIFETIME_DAYS)[number];
export const TRANSACTIONS_DEFAULT_LIFETIME: LifetimeDays = 90;
export const REMINDER_LEAD_MS = 7 * DAY_MS;

/**
 * A key with the transactions scope always ends by itself (default 90 days); any other key
 * ends only when asked to with lifetime_days.
 */
export function expiryFor(
  scopes: readonly Scope[],
  lifetimeDays: LifetimeDays | undefined,
  issuedAt: Date,
): Date | null {
  const days = lifetimeDays ?? (scopes.includes('transactions') ? TRANSACTIONS_DEFAULT_LIFETIME : undefined);
  return days === undefined ? null : new Date(issuedAt.getTime() + days * DAY_MS);
}

/** What the door knows about a key: the key row joined with its issuer's role and its space. */
export type Principal = {
  keyId: string;
  spaceId: string;
  issuerUserId: string;
  scopes: Scope[];
  pushSourceId: string | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  issuerRole: Role | null;
  integrationEnabled: boolean;
  paymentsEnabled: boolean;
  authVersion: number;
};

export type DoorVerdict = { ok: true; caller: IntegrationCaller } | { ok: false; code: ErrorCode };

/** Stops that do not depend on the route: the key itself and its issuer's standing. */
export function isKeyLive(principal: Principal, now: Date): boolean {
  if (principal.revokedAt !== null) return false;
  if (principal.expiresAt !== null && principal.expiresAt.getTime() <= now.getTime()) return false;
  // A viewer may not act; a removed issuer is answered separately (403), so null passes here.
  return principal.issuerRole === null || canWrite(principal.issuerRole);
}

/** The full decision for one call on a route behind `scope`, in the order the spec answers. */
export function judge(principal: Principal, now: Date, scope: Scope | 'any'): DoorVerdict {
  if (!isKeyLive(principal, now)) return { ok: false, code: 'unauthorized' };
  if (principal.issuerRole === null) return { ok: false, code: 'not_a_member' };
  if (!principal.integrationEnabled) return { ok: false, code: 'not_found' };
  if (scope === 'payments' && !principal.paymentsEnabled) return { ok: false, code: 'not_found' };
  if (scope !== 'any' && !principal.scopes.includes(scope)) return { ok: false, code: 'missing_scope' };
  return {
    ok: true,
    caller: {
      keyId: principal.keyId,
      spaceId: principal.spaceId,
      issuerUserId: principal.issuerUserId,
      scopes: principal.scopes,
      pushSourceId: principal.pushSourceId,
    },
  };
}

export type KeyStatus = 'active' | 'revoked' | 'expired';

export function keyStatus(key: { revokedAt: Date | null; expiresAt: Date | null }, now: Date): KeyStatus {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null && key.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}
