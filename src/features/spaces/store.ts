import { type Insertable, type Selectable, sql } from 'kysely';
import type { Cursor } from '../../core/cursor.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { olderThan } from '../../platform/db/paging.ts';
import type {
  Role,
  SellerLogoImagesTable,
  SellerProfilesTable,
  SpacesTable,
} from '../../platform/db/schema.ts';
import type { DocumentKind } from './domain.ts';

export type SpaceRow = Pick<
  Selectable<SpacesTable>,
  | 'id'
  | 'name'
  | 'base_currency'
  | 'plan'
  | 'subscription_packs'
  | 'integration_enabled'
  | 'payments_enabled'
  | 'public_handle'
  | 'created_at'
  | 'time_zone'
  | 'locale'
>;

const SPACE_COLUMNS = [
  'spaces.id',
  'spaces.name',
  'spaces.base_currency',
  'spaces.plan',
  'spaces.subscription_packs',
  'spaces.integration_enabled',
  'spaces.payments_enabled',
  'spaces.public_handle',
  'spaces.created_at',
  'spaces.time_zone',
  'spaces.locale',
] as const;

/** Inserts a space; false when its public handle is taken (nothing is written then). */
export async function insertSpace(
  db: Queryable,
  space: Omit<
    SpaceRow,
    'subscription_packs' | 'integration_enabled' | 'payments_enabled' | 'time_zone' | 'locale'
  > &
    Partial<Pick<SpaceRow, 'time_zone' | 'locale'>>,
): Promise<boolean> {
  const inserted = await db
    .insertInto('spaces')
    .values(space)
    .onConflict((conflict) => conflict.column('public_handle').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function insertMember(
  db: Queryable,
  member: { spaceId: string; userId: string; role: Role; at: Date },
) {
  await db
    .insertInto('members')
    .values({ space_id: member.spaceId, user_id: member.userId, role: member.role, created_at: member.at })
    .execute();
}

export async function findRole(db: Queryable, spaceId: string, userId: string): Promise<Role | undefined> {
  const row = await db
    .selectFrom('members')
    .select('role')
    .where('space_id', '=', spaceId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.role;
}

export function findSpaceWithRole(db: Queryable, spaceId: string, userId: string) {
  return db
    .selectFrom('spaces')
    .innerJoin('members', 'members.space_id', 'spaces.id')
    .select([...SPACE_COLUMNS, 'members.role'])
    .where('spaces.id', '=', spaceId)
    .where('members.user_id', '=', userId)
    .executeTakeFirst();
}

/** The spaces a user is a member of, newest first, `limit` older than `before`. */
export function listSpacesOfUser(
  db: Queryable,
  userId: string,
  page: { before: Cursor | undefined; limit: number },
) {
  return db
    .selectFrom('spaces')
    .innerJoin('members', 'members.space_id', 'spaces.id')
    .select([...SPACE_COLUMNS, 'members.role'])
    .where('members.user_id', '=', userId)
    .where(olderThan('spaces.created_at', 'spaces.id', page.before))
    .orderBy('spaces.created_at', 'desc')
    .orderBy('spaces.id', 'desc')
    .limit(page.limit)
    .execute();
}

export function findSpace(db: Queryable, spaceId: string) {
  return db.selectFrom('spaces').select(SPACE_COLUMNS).where('id', '=', spaceId).executeTakeFirst();
}

export async function updateSpace(
  db: Queryable,
  spaceId: string,
  changes: Partial<
    Pick<
      SpaceRow,
      | 'name'
      | 'plan'
      | 'subscription_packs'
      | 'integration_enabled'
      | 'payments_enabled'
      | 'time_zone'
      | 'locale'
    >
  >,
) {
  if (Object.keys(changes).length === 0) return;
  await db.updateTable('spaces').set(changes).where('id', '=', spaceId).execute();
}

/** Moves the space's auth version on; returns the new value for publishing after commit. */
export async function bumpAuthVersion(db: Queryable, spaceId: string): Promise<number> {
  const row = await db
    .updateTable('spaces')
    .set({ auth_version: sql`auth_version + 1` })
    .where('id', '=', spaceId)
    .returning('auth_version')
    .executeTakeFirstOrThrow();
  return row.auth_version;
}

const MEMBER_COLUMNS = [
  'members.user_id',
  'users.email',
  'users.name',
  'members.role',
  'members.created_at',
] as const;

/** A space's members, the newest first, `limit` older than `before` (a cursor of user ids). */
export function listMembers(
  db: Queryable,
  spaceId: string,
  page: { before: Cursor | undefined; limit: number },
) {
  return db
    .selectFrom('members')
    .innerJoin('users', 'users.id', 'members.user_id')
    .select(MEMBER_COLUMNS)
    .where('members.space_id', '=', spaceId)
    .where(olderThan('members.created_at', 'members.user_id', page.before))
    .orderBy('members.created_at', 'desc')
    .orderBy('members.user_id', 'desc')
    .limit(page.limit)
    .execute();
}

export function findMember(db: Queryable, spaceId: string, userId: string) {
  return db
    .selectFrom('members')
    .innerJoin('users', 'users.id', 'members.user_id')
    .select(MEMBER_COLUMNS)
    .where('members.space_id', '=', spaceId)
    .where('members.user_id', '=', userId)
    .executeTakeFirst();
}

/** Locks the space's member rows, so two demotions cannot both pass the last-owner check. */
export async function lockMembers(db: Queryable, spaceId: string) {
  return db
    .selectFrom('members')
    .select(['user_id', 'role'])
    .where('space_id', '=', spaceId)
    .forUpdate()
    .execute();
}

export async function setRole(db: Queryable, spaceId: string, userId: string, role: Role) {
  await db
    .updateTable('members')
    .set({ role })
    .where('space_id', '=', spaceId)
    .where('user_id', '=', userId)
    .execute();
}

export async function deleteMember(db: Queryable, spaceId: string, userId: string) {
  await db.deleteFrom('members').where('space_id', '=', spaceId).where('user_id', '=', userId).execute();
}

export async function listOwnerIds(db: Queryable, spaceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('members')
    .select('user_id')
    .where('space_id', '=', spaceId)
    .where('role', '=', 'owner')
    .execute();
  return rows.map((row) => row.user_id);
}

/** Locks the space row (serialising per-space allowances) and reads its plan. */
export function lockSpacePlan(db: Queryable, spaceId: string) {
  return db
    .selectFrom('spaces')
    .select(['plan', 'subscription_packs'])
    .where('id', '=', spaceId)
    .forUpdate()
    .executeTakeFirst();
}

/**
 * The closing date, share-locked until the caller's transaction ends (as `filingTermsQuery`):
 * a closing in flight is waited for and its date read, and a closing that comes later waits
 * for the caller's filing to commit.
 */
export async function findClosedThrough(db: Queryable, spaceId: string): Promise<string | null> {
  const row = await db
    .selectFrom('spaces')
    .select('closed_through')
    .where('id', '=', spaceId)
    .forShare()
    .executeTakeFirst();
  return row?.closed_through ?? null;
}

/**
 * What a filing needs of its space: the plan (for allowances) and where the books are closed,
 * share-locked for the filing's transaction, so closing the books waits for the filings in
 * flight and a filing that waited reads the new date. A query, not its answer, so a filing can
 * read it inside the statement that opens it.
 */
export function filingTermsQuery(db: Queryable, spaceId: string) {
  return db.selectFrom('spaces').select(['plan', 'closed_through']).where('id', '=', spaceId).forShare();
}

/** Moves the closing date forward (or keeps it); false when the books are closed later already. */
export async function moveClosedThrough(db: Queryable, spaceId: string, through: string): Promise<boolean> {
  const result = await db
    .updateTable('spaces')
    .set({ closed_through: through })
    .where('id', '=', spaceId)
    .where((eb) => eb.or([eb('closed_through', 'is', null), eb('closed_through', '<=', through)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export type ProfileRow = Omit<Selectable<SellerProfilesTable>, 'space_id' | 'updated_at'>;

/** The book's seller profile, or undefined while nothing was saved. */
export function findProfile(db: Queryable, spaceId: string) {
  return db.selectFrom('seller_profiles').selectAll().where('space_id', '=', spaceId).executeTakeFirst();
}

/** Writes the whole profile (insert or replace). */
export async function saveProfile(db: Queryable, spaceId: string, profile: ProfileRow, at: Date) {
  await db
    .insertInto('seller_profiles')
    .values({ space_id: spaceId, ...profile, updated_at: at })
    .onConflict((conflict) => conflict.column('space_id').doUpdateSet({ ...profile, updated_at: at }))
    .execute();
}

/** The space whose public handle this is, if any. */
export function findSpaceByHandle(db: Queryable, handle: string) {
  return db
    .selectFrom('spaces')
    .select(['id', 'name'])
    .where('public_handle', '=', handle)
    .executeTakeFirst();
}

export async function setHandle(db: Queryable, spaceId: string, handle: string) {
  await db.updateTable('spaces').set({ public_handle: handle }).where('id', '=', spaceId).execute();
}

/** The numbering rows a book has (a kind without one has not numbered anything yet). */
export function listNumbering(db: Queryable, spaceId: string) {
  return db
    .selectFrom('document_numbering')
    .select(['kind', 'prefix', 'last_value'])
    .where('space_id', '=', spaceId)
    .execute();
}

/**
 * Takes the next number of a kind: one statement that makes the row or moves it on, and holds
 * its lock until the caller's transaction ends, so concurrent creations queue and a rollback
 * gives the number back.
 */
export function takeNumber(db: Queryable, spaceId: string, kind: DocumentKind, prefix: string) {
  return db
    .insertInto('document_numbering')
    .values({ space_id: spaceId, kind, prefix, last_value: 1 })
    .onConflict((conflict) =>
      conflict
        .columns(['space_id', 'kind'])
        .doUpdateSet((eb) => ({ last_value: eb('document_numbering.last_value', '+', 1) })),
    )
    .returning(['prefix', 'last_value'])
    .executeTakeFirstOrThrow();
}

/** Sets a kind's prefix and where it counts from. */
export async function setNumbering(
  db: Queryable,
  spaceId: string,
  kind: DocumentKind,
  numbering: { prefix: string; last_value: number },
) {
  await db
    .insertInto('document_numbering')
    .values({ space_id: spaceId, kind, ...numbering })
    .onConflict((conflict) => conflict.columns(['space_id', 'kind']).doUpdateSet(numbering))
    .execute();
}

/** Each book's logo now (`current`) beside its image (`image`). */
function currentLogoImages(db: Queryable) {
  return db
    .selectFrom('seller_logos as current')
    .innerJoin('seller_logo_images as image', (join) =>
      join.onRef('image.space_id', '=', 'current.space_id').onRef('image.sha256', '=', 'current.sha256'),
    );
}

/** The book's logo now, with its image, or undefined when it has none. */
export function findLogo(db: Queryable, spaceId: string) {
  return currentLogoImages(db)
    .select(['image.sha256', 'image.content_type', 'image.bytes', 'image.width', 'image.height'])
    .where('current.space_id', '=', spaceId)
    .executeTakeFirst();
}

/** One of the logos a book has had, by the SHA-256 of its bytes. */
export function findLogoImage(db: Queryable, spaceId: string, sha256: string) {
  return db
    .selectFrom('seller_logo_images')
    .select(['sha256', 'content_type', 'bytes', 'width', 'height'])
    .where('space_id', '=', spaceId)
    .where('sha256', '=', sha256)
    .executeTakeFirst();
}

/** A book's logo now by the SHA-256 of its bytes (its public address). */
export function findLogoByDigest(db: Queryable, sha256: string) {
  return currentLogoImages(db)
    .select(['image.content_type', 'image.bytes'])
    .where('current.sha256', '=', sha256)
    .limit(1)
    .executeTakeFirst();
}

/** The address part of the book's logo: the SHA-256 of its bytes, or undefined. */
export function findLogoDigest(db: Queryable, spaceId: string) {
  return db.selectFrom('seller_logos').select(['sha256']).where('space_id', '=', spaceId).executeTakeFirst();
}

/** Keeps a logo image (once per book and content) and makes it the book's logo. */
export async function saveLogo(db: Queryable, image: Insertable<SellerLogoImagesTable>) {
  await db
    .insertInto('seller_logo_images')
    .values(image)
    .onConflict((conflict) => conflict.columns(['space_id', 'sha256']).doNothing())
    .execute();
  const current = { sha256: image.sha256, updated_at: image.created_at };
  await db
    .insertInto('seller_logos')
    .values({ space_id: image.space_id, ...current })
    .onConflict((conflict) => conflict.column('space_id').doUpdateSet(current))
    .execute();
}

/** The book has no logo any more; the images its sent documents name stay. */
export async function deleteLogo(db: Queryable, spaceId: string) {
  await db.deleteFrom('seller_logos').where('space_id', '=', spaceId).execute();
}

/** The space's member with this email (in any case), if any. */
export function findMemberByEmail(db: Queryable, spaceId: string, email: string) {
  return db
    .selectFrom('members')
    .innerJoin('users', 'users.id', 'members.user_id')
    .select(['members.user_id', 'members.role'])
    .where('members.space_id', '=', spaceId)
    .where((eb) => eb(eb.fn('lower', ['users.email']), '=', email.toLowerCase()))
    .executeTakeFirst();
}
