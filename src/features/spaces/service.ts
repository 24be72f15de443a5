import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import { PAGE_SIZE, pageOf, readCursor } from '../../core/cursor.ts';
import { AppError } from '../../core/errors.ts';
import {
  bookPeopleFormat,
  type CheckedSetting,
  checkLocale,
  checkTimeZone,
  localeFromAcceptLanguage,
  type PeopleFormat,
  UTC_ENGLISH,
} from '../../core/people-format.ts';
import { canAdminister, canWrite } from '../../core/roles.ts';
import type { AuthStamps } from '../../platform/auth-stamps.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import type { Plan, Role } from '../../platform/db/schema.ts';
import { Member } from '../../platform/http/member.ts';
import { findUserIdByEmail } from '../users/index.ts';
import { canSetRole, handleFrom, leavesAnOwner } from './domain.ts';
import * as store from './store.ts';

export type SpacesDeps = { db: Db; clock: Clock; authStamps: AuthStamps };

/**
 * The caller's proven membership of the space, read from the members row; a space the caller is
 * not in does not exist for them. The one place a Member is made (see platform/http/member.ts).
 */
export async function requireMember(
  db: Queryable,
  spaceId: string,
  userId: string,
  allowed?: readonly Role[],
): Promise<Member> {
  const role = await store.findRole(db, spaceId, userId);
  if (!role) throw new AppError('not_found', 'No such space.');
  if (allowed && !allowed.includes(role)) {
    throw new AppError(
      'forbidden',
      `This needs the role ${allowed.join(' or ')} in this space; you are ${role}.`,
    );
  }
  return Member.fromMembersRow({ spaceId, userId, role });
}

/** The caller's role in the space; a space the caller is not in does not exist for them. */
export async function requireRole(
  db: Queryable,
  spaceId: string,
  userId: string,
  allowed?: readonly Role[],
): Promise<Role> {
  return (await requireMember(db, spaceId, userId, allowed)).role;
}

/** A proven member who may administer the space (owner or admin); forbidden otherwise. */
export function requireAdministering(member: Member): Member {
  if (!canAdminister(member.role))
    throw new AppError('forbidden', `Only an owner or an admin can do this; you are ${member.role}.`);
  return member;
}

/** A proven member who may change the space's records (not a viewer); forbidden otherwise. */
export function requireWriting(member: Member): Member {
  if (!canWrite(member.role))
    throw new AppError(
      'forbidden',
      'This needs the role owner or admin or member in this space; you are viewer.',
    );
  return member;
}

export async function requireAdministrator(db: Queryable, spaceId: string, userId: string): Promise<Role> {
  return requireAdministering(await requireMember(db, spaceId, userId)).role;
}

/** Bumps the auth version inside `tx`; call the returned function after commit. */
export async function invalidateKeys(
  deps: SpacesDeps,
  tx: Queryable,
  spaceId: string,
): Promise<() => Promise<void>> {
  const version = await store.bumpAuthVersion(tx, spaceId);
  return () => deps.authStamps.publish(spaceId, version);
}

function present(row: store.SpaceRow & { role: Role }) {
  return { ...row, created_at: row.created_at.toISOString() };
}

/** Draws of a public handle's random suffix before a book's creation gives up. */
const HANDLE_DRAWS = 5;

/** A setting checked by its rule in core/people-format.ts, or refused naming its field. */
function accepted(checked: CheckedSetting, field: string): string {
  if (!checked.ok) throw new AppError('invalid_request', checked.problem, { field });
  return checked.value;
}

/**
 * Creates a book with the caller as its owner. Its time zone is the one given (a browser's own,
 * sent by the Books form) or UTC; its locale the one given, else the creating browser's
 * Accept-Language, else English.
 */
export async function createSpace(
  deps: SpacesDeps,
  ownerId: string,
  input: {
    name: string;
    base_currency: string;
    plan?: Plan | undefined;
    time_zone?: string | undefined;
    locale?: string | undefined;
  },
  acceptLanguage?: string | undefined,
) {
  const base = {
    id: randomUUID(),
    name: input.name,
    base_currency: input.base_currency.toUpperCase(),
    plan: input.plan ?? 'free',
    created_at: deps.clock.now(),
    time_zone:
      input.time_zone === undefined
        ? UTC_ENGLISH.timeZone
        : accepted(checkTimeZone(input.time_zone), 'time_zone'),
    locale:
      input.locale === undefined
        ? localeFromAcceptLanguage(acceptLanguage)
        : accepted(checkLocale(input.locale), 'locale'),
  };
  const space = await deps.db.transaction().execute(async (tx) => {
    // The handle's suffix is random; one another book already holds is drawn again.
    for (let draw = 0; draw < HANDLE_DRAWS; draw += 1) {
      const made = { ...base, public_handle: handleFrom(input.name, randomBytes(3).toString('hex')) };
      if (!(await store.insertSpace(tx, made))) continue;
      await store.insertMember(tx, { spaceId: made.id, userId: ownerId, role: 'owner', at: made.created_at });
      return made;
    }
    throw new AppError('conflict', 'No free public handle was found for this name; try again.');
  });
  return present({
    ...space,
    subscription_packs: 0,
    integration_enabled: true,
    payments_enabled: true,
    role: 'owner',
  });
}

/** The user's spaces, newest first, 50 a page (app API and the Books page). */
export async function listSpaces(
  deps: SpacesDeps,
  userId: string,
  query: { cursor?: string | undefined } = {},
) {
  const before = readCursor(query.cursor);
  const rows = await store.listSpacesOfUser(deps.db, userId, { before, limit: PAGE_SIZE + 1 });
  const page = pageOf(rows, (row) => ({ at: row.created_at, id: row.id }));
  return { items: page.items.map(present), next_cursor: page.next_cursor };
}

export async function getSpace(deps: SpacesDeps, userId: string, spaceId: string) {
  const row = await store.findSpaceWithRole(deps.db, spaceId, userId);
  if (!row) throw new AppError('not_found', 'No such space.');
  return present(row);
}

export async function updateSpace(
  deps: SpacesDeps,
  userId: string,
  spaceId: string,
  changes: {
    name?: string;
    plan?: Plan;
    subscription_packs?: number;
    integration_enabled?: boolean;
    payments_enabled?: boolean;
    time_zone?: string;
    locale?: string;
  },
) {
  const role = await requireAdministrator(deps.db, spaceId, userId);
  if ((changes.plan !== undefined || changes.subscription_packs !== undefined) && role !== 'owner') {
    throw new AppError('forbidden', 'Only an owner can change the plan.');
  }
  const switches = changes.integration_enabled !== undefined || changes.payments_enabled !== undefined;
  // Only the known fields reach the database; unknown body fields are ignored, never columns.
  const known = {
    name: changes.name,
    plan: changes.plan,
    subscription_packs: changes.subscription_packs,
    integration_enabled: changes.integration_enabled,
    payments_enabled: changes.payments_enabled,
    time_zone:
      changes.time_zone === undefined ? undefined : accepted(checkTimeZone(changes.time_zone), 'time_zone'),
    locale: changes.locale === undefined ? undefined : accepted(checkLocale(changes.locale), 'locale'),
  };
  const update = Object.fromEntries(Object.entries(known).filter(([, value]) => value !== undefined));
  const publish = await deps.db.transaction().execute(async (tx) => {
    await store.updateSpace(tx, spaceId, update);
    return switches ? invalidateKeys(deps, tx, spaceId) : undefined;
  });
  await publish?.();
  return getSpace(deps, userId, spaceId);
}

type MemberRow = Awaited<ReturnType<typeof store.findMember>> & object;
const presentMember = (row: MemberRow) => ({ ...row, created_at: row.created_at.toISOString() });

/** A space's members, the newest first, 50 a page (app API and the Members page). */
export async function listMembers(
  deps: SpacesDeps,
  userId: string,
  spaceId: string,
  query: { cursor?: string | undefined } = {},
) {
  await requireRole(deps.db, spaceId, userId);
  const before = readCursor(query.cursor);
  const rows = await store.listMembers(deps.db, spaceId, { before, limit: PAGE_SIZE + 1 });
  const page = pageOf(rows, (row) => ({ at: row.created_at, id: row.user_id }));
  return { items: page.items.map(presentMember), next_cursor: page.next_cursor };
}

async function memberOf(deps: SpacesDeps, spaceId: string, userId: string) {
  const row = await store.findMember(deps.db, spaceId, userId);
  if (!row) throw new AppError('not_found', 'This person is not a member of the space.');
  return presentMember(row);
}

export async function addMember(
  deps: SpacesDeps,
  actorId: string,
  spaceId: string,
  input: { email: string; role: Role },
) {
  const actorRole = await requireAdministrator(deps.db, spaceId, actorId);
  if (!canSetRole(actorRole, null, input.role))
    throw new AppError('forbidden', 'Only an owner can add an owner.');
  const userId = await findUserIdByEmail(deps, input.email);
  if (!userId) {
    throw new AppError(
      'user_not_found',
      'No one has signed up with this email yet; ask them to sign up first.',
      {
        field: 'email',
      },
    );
  }
  if (await store.findRole(deps.db, spaceId, userId)) {
    throw new AppError('conflict', 'This person is already a member; change their role instead.');
  }
  await store.insertMember(deps.db, { spaceId, userId, role: input.role, at: deps.clock.now() });
  return memberOf(deps, spaceId, userId);
}

async function changeMembership(
  deps: SpacesDeps,
  actorId: string,
  spaceId: string,
  targetId: string,
  nextRole: Role | null,
) {
  const actorRole = await requireAdministrator(deps.db, spaceId, actorId);
  const publish = await deps.db.transaction().execute(async (tx) => {
    const members = await store.lockMembers(tx, spaceId);
    const target = members.find((member) => member.user_id === targetId);
    if (!target) throw new AppError('not_found', 'This person is not a member of the space.');
    if (!canSetRole(actorRole, target.role, nextRole)) {
      throw new AppError('forbidden', 'An admin can neither change an owner nor make one.');
    }
    const owners = members.filter((member) => member.role === 'owner').length;
    if (!leavesAnOwner(owners, target.role, nextRole)) {
      throw new AppError('last_owner', 'A space needs at least one owner; make someone else owner first.');
    }
    if (nextRole === null) await store.deleteMember(tx, spaceId, targetId);
    else await store.setRole(tx, spaceId, targetId, nextRole);
    // Keys act with their issuer's rights, so any change of membership re-checks them.
    return invalidateKeys(deps, tx, spaceId);
  });
  await publish();
}

export async function changeRole(
  deps: SpacesDeps,
  actorId: string,
  spaceId: string,
  targetId: string,
  role: Role,
) {
  await changeMembership(deps, actorId, spaceId, targetId, role);
  return memberOf(deps, spaceId, targetId);
}

export async function removeMember(deps: SpacesDeps, actorId: string, spaceId: string, targetId: string) {
  await changeMembership(deps, actorId, spaceId, targetId, null);
}

/** The owners of a space, for messages the spec addresses to "the owner". */
export function listOwnerIds(db: Queryable, spaceId: string): Promise<string[]> {
  return store.listOwnerIds(db, spaceId);
}

/**
 * Inside a transaction: locks the space row, so allowances counted after it hold under
 * concurrent requests, and returns its plan and packs.
 */
export async function lockSpacePlan(tx: Queryable, spaceId: string): Promise<{ plan: Plan; packs: number }> {
  const row = await store.lockSpacePlan(tx, spaceId);
  if (!row) throw new AppError('not_found', 'No such space.');
  return { plan: row.plan, packs: row.subscription_packs };
}

/** The space's name and plan, for a feature acting in its name outside a session (the chat bot). */
export async function spaceNameAndPlan(
  db: Queryable,
  spaceId: string,
): Promise<{ name: string; plan: Plan }> {
  const row = await store.findSpace(db, spaceId);
  if (!row) throw new AppError('not_found', 'No such space.');
  return { name: row.name, plan: row.plan };
}

/**
 * The book's time zone and locale, as its public pages, its mails to clients and its documents
 * write moments, dates and amounts (the app's pages read the same two columns with the viewer).
 */
export async function peopleFormatOf(db: Queryable, spaceId: string): Promise<PeopleFormat> {
  const space = await store.findSpace(db, spaceId);
  if (!space) throw new AppError('not_found', 'No such space.');
  return bookPeopleFormat(space);
}

/**
 * The last day of the closed books, or null while nothing is closed. Inside a transaction the
 * space's row stays share-locked until it ends, so a filing checked against this date cannot
 * race a closing (which updates that row).
 */
export function closedThrough(db: Queryable, spaceId: string): Promise<string | null> {
  return store.findClosedThrough(db, spaceId);
}

/** Closes the books through a date. Closing only moves forward: a closed day stays closed. */
export async function closePeriod(deps: SpacesDeps, userId: string, spaceId: string, through: string) {
  await requireAdministrator(deps.db, spaceId, userId);
  // One guarded update, so two closings at once cannot move the date backwards.
  if (!(await store.moveClosedThrough(deps.db, spaceId, through))) {
    const current = await store.findClosedThrough(deps.db, spaceId);
    throw new AppError(
      'period_closed',
      `The books are closed through ${current}; a closed day stays closed.`,
      {
        closed_through: current,
      },
    );
  }
  return { space_id: spaceId, closed_through: through };
}

/**
 * The query for a space's plan and the day its books are closed through, share-locked until the
 * caller's transaction ends (closing the books waits for it): a pushed batch needs both, and
 * reads them inside the statement that opens it.
 */
export function filingTermsQuery(db: Queryable, spaceId: string) {
  return store.filingTermsQuery(db, spaceId);
}

/** The currency the space keeps its books in (policy limits default to it). */
export async function baseCurrencyOf(db: Queryable, spaceId: string): Promise<string> {
  const space = await store.findSpace(db, spaceId);
  if (!space) throw new AppError('not_found', 'No such space.');
  return space.base_currency;
}
