import { sql } from 'kysely';
import { jsonRecords } from '../../platform/db/bulk.ts';
import type { Queryable } from '../../platform/db/database.ts';
import type { ScreeningEntry } from './domain.ts';

/** Entries go in by this many rows a statement (one JSON document each). */
const INSERT_BATCH = 5_000;

export async function insertList(
  db: Queryable,
  list: { id: string; source: string; publishedOn: string; entries: ScreeningEntry[]; at: Date },
) {
  await db
    .insertInto('screening_lists')
    .values({
      id: list.id,
      source: list.source,
      published_on: list.publishedOn,
      entries: list.entries.length,
      is_current: false,
      loaded_at: list.at,
    })
    .execute();
  for (let start = 0; start < list.entries.length; start += INSERT_BATCH) {
    const rows = list.entries
      .slice(start, start + INSERT_BATCH)
      .map((entry) => ({ list_id: list.id, kind: entry.kind, value: entry.value, sdn_uid: entry.sdnUid }));
    await sql`
      INSERT INTO screening_entries (list_id, kind, value, sdn_uid)
      SELECT list_id, kind, value, sdn_uid
      FROM ${jsonRecords(rows, 'r', 'list_id uuid, kind text, value text, sdn_uid text')}`.execute(db);
  }
}

/** Makes `listId` the current list and drops the entries of every other one. */
export async function makeCurrent(db: Queryable, listId: string) {
  await db.updateTable('screening_lists').set({ is_current: false }).where('is_current', '=', true).execute();
  await db.updateTable('screening_lists').set({ is_current: true }).where('id', '=', listId).execute();
  await db.deleteFrom('screening_entries').where('list_id', '<>', listId).execute();
}

export async function currentList(db: Queryable) {
  return db
    .selectFrom('screening_lists')
    .select(['id', 'source', 'published_on', 'entries', 'loaded_at'])
    .where('is_current', '=', true)
    .executeTakeFirst();
}

/** Every entry of a list, for the in-process index. */
export async function entriesOf(db: Queryable, listId: string) {
  return db
    .selectFrom('screening_entries')
    .select(['kind', 'value', 'sdn_uid'])
    .where('list_id', '=', listId)
    .execute();
}
