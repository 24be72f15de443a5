import { type Expression, type SqlBool, sql } from 'kysely';
import type { Cursor } from '../../core/cursor.ts';

// Keyset paging for lists read newest first by (created_at, id): the rows after a page are the
// ones strictly older than its last row, compared as a pair so equal timestamps never drop or
// repeat a row, and an index on (…, created_at, id) answers it without reading earlier pages.

/** Rows older than `before` (all rows when there is no cursor); columns are qualified names. */
export function olderThan(createdAt: string, id: string, before: Cursor | undefined): Expression<SqlBool> {
  if (before === undefined) return sql<SqlBool>`true`;
  return sql<SqlBool>`(${sql.ref(createdAt)}, ${sql.ref(id)}) < (${before.at}, ${before.id})`;
}
