import type { Selectable } from 'kysely';
import type { Cursor } from '../../core/cursor.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { olderThan } from '../../platform/db/paging.ts';
import type { SitesTable } from '../../platform/db/schema.ts';

export type SiteRow = Selectable<SitesTable>;

/** Inserts the site, or answers the space's existing row for that origin (with its token). */
export async function insertOrFind(db: Queryable, row: SiteRow): Promise<{ row: SiteRow; created: boolean }> {
  const inserted = await db
    .insertInto('sites')
    .values(row)
    .onConflict((conflict) => conflict.columns(['space_id', 'origin']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { row: inserted, created: true };
  const existing = await db
    .selectFrom('sites')
    .selectAll()
    .where('space_id', '=', row.space_id)
    .where('origin', '=', row.origin)
    .executeTakeFirstOrThrow();
  return { row: existing, created: false };
}

/** A space's sites, the newest first, `limit` older than `before`. */
export function listSites(
  db: Queryable,
  spaceId: string,
  page: { before: Cursor | undefined; limit: number },
) {
  return db
    .selectFrom('sites')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where(olderThan('created_at', 'id', page.before))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .execute();
}

export function findSite(db: Queryable, spaceId: string, siteId: string) {
  return db
    .selectFrom('sites')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('id', '=', siteId)
    .executeTakeFirst();
}

export async function markVerified(db: Queryable, siteId: string, at: Date) {
  await db.updateTable('sites').set({ verified_at: at }).where('id', '=', siteId).execute();
}

export async function deleteSite(db: Queryable, spaceId: string, siteId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('sites')
    .where('space_id', '=', spaceId)
    .where('id', '=', siteId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function verifiedOrigins(db: Queryable, spaceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('sites')
    .select('origin')
    .where('space_id', '=', spaceId)
    .where('verified_at', 'is not', null)
    .orderBy('origin')
    .execute();
  return rows.map((row) => row.origin);
}
