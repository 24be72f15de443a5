import type { Role } from '../../core/roles.ts';
import type { Plan, Role as StoredRole } from '../../platform/db/schema.ts';

export { ROLES } from '../../core/roles.ts';
export const PLANS: readonly Plan[] = ['free', 'starter', 'pro', 'scale', 'enterprise'];

/** The members table stores exactly the roles core/roles.ts names, so neither needs a cast. */
export type SameRoles = [Role, StoredRole] extends [StoredRole, Role] ? true : never;
export const SAME_ROLES: SameRoles = true;

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

/** "Acmé Ltd." → "acme-ltd-" + suffix: the public payment handle shown to payers. */
export function handleFrom(name: string, suffix: string): string {
  const words = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
  // Whole words only, so the cut never leaves a hyphen at the end.
  let slug = '';
  for (const word of words) {
    const next = slug === '' ? word.slice(0, 40) : `${slug}-${word}`;
    if (next.length > 40) break;
    slug = next;
  }
  return `${slug === '' ? 'space' : slug}-${suffix}`;
}

/**
 * A day on or before the day the books are closed through is closed: nothing dated on it is
 * filed, and nothing filed on it is undone.
 */
export function inClosedPeriod(occurredOn: string, closedThrough: string | null): boolean {
  return closedThrough !== null && occurredOn <= closedThrough;
}

/** A public handle: lower-case letters and digits in hyphen-separated runs, 3 to 48 characters. */
export const HANDLE_PATTERN = '^[a-z0-9]+(-[a-z0-9]+)*$';

// Codes the region names know that are not ISO 3166-1 countries: groupings, exceptional
// reservations and the user-assigned ranges. Withdrawn codes (DD, SU, YU…) are left out because
// the runtime renames them to their successors.
const NOT_COUNTRIES = new Set(['AC', 'CP', 'CQ', 'DG', 'EA', 'EU', 'EZ', 'IC', 'TA', 'UN', 'ZZ']);

function isCurrentCode(code: string): boolean {
  return Intl.getCanonicalLocales(`und-${code}`)[0] === `und-${code}`;
}

function isoCountryCodes(): string[] {
  const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  const codes: string[] = [];
  for (let first = 65; first <= 90; first += 1) {
    for (let second = 65; second <= 90; second += 1) {
      const code = String.fromCharCode(first, second);
      if (code.startsWith('X') || code.startsWith('Q') || NOT_COUNTRIES.has(code)) continue;
      if (names.of(code) !== undefined && isCurrentCode(code)) codes.push(code);
    }
  }
  return codes;
}

/** ISO 3166-1 alpha-2 country codes, as the runtime's region names know them. */
export const COUNTRY_CODES: readonly string[] = isoCountryCodes();

/** A country's English name ("DE" → "Germany"); the code itself when it has none. */
export function countryName(code: string): string {
  return new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' }).of(code) ?? code;
}

/** The name a business goes by on its documents: trading name, else legal name, else the book's. */
export function displayNameOf(profile: { trading_name: string; legal_name: string }, bookName: string) {
  return profile.trading_name.trim() || profile.legal_name.trim() || bookName;
}

/** A postal address written out, one part a line: street, extra line, code and city, region, country. */
export function postalAddressText(address: {
  line1: string;
  line2: string;
  postal_code: string;
  city: string;
  region: string;
  country: string;
}): string {
  return [
    address.line1,
    address.line2,
    `${address.postal_code} ${address.city}`,
    address.region,
    address.country === '' ? '' : countryName(address.country),
  ]
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join('\n');
}

export const DOCUMENT_KINDS = ['invoice', 'quote', 'credit_note'] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];

/** Each kind counts apart, with its own prefix until the book sets another. */
export const DEFAULT_PREFIXES: Readonly<Record<DocumentKind, string>> = {
  invoice: 'INV-',
  quote: 'QUO-',
  credit_note: 'CN-',
};

/** A prefix may hold letters, digits and / . _ - (up to 20): it ends up in file names. */
export const PREFIX_PATTERN = '^[A-Za-z0-9/._-]*$';

/** "INV-" and 1 → "INV-000001": six digits at least. */
export function documentNumber(prefix: string, value: number): string {
  return `${prefix}${String(value).padStart(6, '0')}`;
}
