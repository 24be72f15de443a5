import type { Plan, Role } from '../../platform/db/schema.ts';

export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];
export const PLANS: readonly Plan[] = ['free', 'starter', 'pro', 'scale', 'enterprise'];

/** Owners and admins run the space's connections: keys, subscriptions, members. */
export function canAdminister(role: Role): boolean {
  return role === 'owner' || role === 'admin';
}

/**
 * An owner may set any role on anyone. An admin may manage admins, members and viewers, but
 * may neither touch an owner nor make one.
 */
export function canSetRole(actor: Role, currentRole: Role | null, nextRole: Role | null): boolean {
  if (actor === 'owner') return true;
  if (actor !== 'admin') return false;
  return currentRole !== 'owner' && nextRole !== 'owner';
}

/** A space never loses its last owner. */
export function leavesAnOwner(ownerCount: number, currentRole: Role, nextRole: Role | null): boolean {
  return !(currentRole === 'owner' && nextRole !== 'owner' && ownerCount <= 1);
}

/** Book subscriptions allowed per plan (DECISIONS "Plans per space"). */
export function subscriptionAllowance(plan: Plan, packs: number): number {
  const base: Record<Plan, number> = { free: 0, starter: 0, pro: 1, scale: 5, enterprise: 25 };
  return base[plan] === 0 ? 0 : base[plan] + 5 * packs;
}

/** Monthly synced-rows allowance per plan; null is unlimited. */
export function syncedRowsAllowance(plan: Plan): number | null {
  const rows: Record<Plan, number | null> = {
    free: 1_000,
    starter: 10_000,
    pro: 100_000,
    scale: 1_000_000,
    enterprise: null,
  };
  return rows[plan];
}

export function planIncludesChat(plan: Plan): boolean {
  return plan === 'pro' || plan === 'scale' || plan === 'enterprise';
}

/** "Acme Ltd." → "acme-ltd-" + suffix: the public payment handle shown to payers. */
export function handleFrom(name: string, suffix: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-');
  // Runs were collapsed above, so at most one hyphen stands at either end.
  const trimmed = slug.slice(slug.startsWith('-') ? 1 : 0, slug.endsWith('-') ? -1 : undefined).slice(0, 40);
  return `${trimmed.length > 0 ? trimmed : 'space'}-${suffix}`;
}

/**
 * A day on or before the day the books are closed through is closed: nothing dated on it is
 * filed, and nothing filed on it is undone.
 */
export function inClosedPeriod(occurredOn: string, closedThrough: string | null): boolean {
  return closedThrough !== null && occurredOn <= closedThrough;
}
