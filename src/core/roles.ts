// A person's role in a space and what each role may do: the one rule every service, door and
// page asks, so the app API, the integration door and the buttons a page shows never disagree.

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;

export type Role = (typeof ROLES)[number];

/** A viewer sees everything and may change nothing; the server refuses their writes too. */
export function canWrite(role: Role): boolean {
  return role !== 'viewer';
}

/** Owners and admins run the space's connections: keys, subscriptions, members, approvals. */
export function canAdminister(role: Role): boolean {
  return role === 'owner' || role === 'admin';
}

/** The roles that may write, for the checks that take a list of roles. */
export const WRITER_ROLES: readonly Role[] = ROLES.filter(canWrite);
