import { type Expression, type OperationNodeSource, sql } from 'kysely';
import { assert } from '../../core/assert.ts';
import { recordsJson } from '../../platform/db/bulk.ts';
import type { Queryable } from '../../platform/db/database.ts';

/**
 * Opens a batch in one statement and answers the month's usage with what `terms` selects (the
 * space's filing terms, say), or nothing when `terms` finds no row. In order: the source's row
 * is locked, so this source's batches queue here and what `filedExternalIds` reads next is every
 * earlier batch's work; then the month's usage row is created or locked (the no-op update takes
 * the lock). The usage row is reached only through the source's lock, so the two locks are
 * always taken in that order. The batch's row is written alongside.
 */
export async function openBatch<Terms extends object>(
  db: Queryable,
  batch: {
    id: string;
    spaceId: string;
    pushSourceId: string;
    keyId: string;
    rowsTotal: number;
    month: string;
    at: Date;
  },
  terms: Expression<Terms>,
): Promise<(Terms & { rows_booked: number }) | undefined> {
  const result = await sql<Terms & { rows_booked: number }>`
    WITH source AS (
      SELECT id FROM push_sources WHERE id = ${batch.pushSourceId} FOR NO KEY UPDATE
    ),
    usage AS (
      INSERT INTO push_usage (space_id, month, rows_booked)
      SELECT ${batch.spaceId}, ${batch.month}, 0 FROM source
      ON CONFLICT (space_id, month) DO UPDATE SET rows_booked = push_usage.rows_booked
      RETURNING rows_booked
    ),
    opened AS (
      INSERT INTO push_batches (id, space_id, push_source_id, key_id, status, rows_total, booked,
        duplicates, skipped_closed, rejected, accounts_created, created_at)
      VALUES (${batch.id}, ${batch.spaceId}, ${batch.pushSourceId}, ${batch.keyId}, 'booked',
        ${batch.rowsTotal}, 0, 0, 0, 0, '{}', ${batch.at})
    )
    SELECT terms.*, (SELECT rows_booked FROM usage) AS rows_booked FROM ${terms} AS terms`.execute(db);
  const opened = result.rows[0];
  if (opened !== undefined) assert(opened.rows_booked !== null, 'A batch opened on a source that is gone');
  return opened;
}

/**
 * Of these external_ids, the ones the source has filed already (call after `openBatch`). Each id
 * is looked up by key on its own (the LIMIT keeps the lookup a nested probe), whatever the
 * planner believes of the source's size; the plans tried before are in docs/design/push.md.
 */
export async function filedExternalIds(
  db: Queryable,
  pushSourceId: string,
  externalIds: string[],
): Promise<Set<string>> {
  if (externalIds.length === 0) return new Set();
  const result = await sql<{ external_id: string }>`
    SELECT wanted.id AS external_id
    FROM jsonb_array_elements_text(${recordsJson(externalIds)}::jsonb) AS wanted(id),
    LATERAL (
      SELECT 1 FROM push_rows
      WHERE push_source_id = ${pushSourceId} AND external_id = wanted.id
      LIMIT 1
    ) AS filed`.execute(db);
  return new Set(result.rows.map((row) => row.external_id));
}

/** The document `insertPushRows` takes: each booked row's external_id and ledger entry. */
export function pushRowsDocument(rows: { externalId: string; entryId: string }[]): string {
  return recordsJson(rows.map((row) => [row.externalId, row.entryId]));
}

export async function releaseExternalIds(db: Queryable, pushSourceId: string, externalIds: string[]) {
  if (externalIds.length === 0) return;
  await db
    .deleteFrom('push_rows')
    .where('push_source_id', '=', pushSourceId)
    .where('external_id', 'in', externalIds)
    .execute();
}

/** The document `recordBatch` takes for the refused rows: index, external_id, error, detail. */
export function rejectionsDocument(
  rows: { index: number; external_id: string | null; error: string; detail: string }[],
): string {
  return recordsJson(rows.map((row) => [row.index, row.external_id, row.error, row.detail]));
}

/**
 * Records a batch, after its entries, in one statement: its booked rows (`document`, see
 * `pushRowsDocument`; the database checks each names an entry of its space), its refused rows
 * with their reasons (`rejections`, see `rejectionsDocument`), the month's usage, the batch's
 * counts, and `events` (the insert of the batch's event group) when there are any.
 * The source is locked, so an id already filed here would be a bug, and the primary key says so.
 */
export async function recordBatch(
  db: Queryable,
  batch: {
    id: string;
    pushSourceId: string;
    spaceId: string;
    month: string;
    counts: {
      booked: number;
      duplicates: number;
      skipped_closed: number;
      rejected: number;
      accounts_created: string[];
    };
  },
  document: string,
  events: OperationNodeSource | undefined,
  rejections = '[]',
) {
  const { counts } = batch;
  const withEvents = events === undefined ? sql`` : sql`events AS (${events}),`;
  await sql`
    WITH ${withEvents} pushed AS (
      INSERT INTO push_rows (push_source_id, external_id, space_id, batch_id, entry_id)
      SELECT ${batch.pushSourceId}::uuid, t->>0, ${batch.spaceId}::uuid, ${batch.id}::uuid, (t->>1)::uuid
      FROM jsonb_array_elements(${document}::jsonb) AS t
    ),
    refused AS (
      INSERT INTO push_rejections (batch_id, space_id, push_source_id, row_index, external_id, error, detail)
      SELECT ${batch.id}::uuid, ${batch.spaceId}::uuid, ${batch.pushSourceId}::uuid, (t->>0)::integer,
        t->>1, t->>2, t->>3
      FROM jsonb_array_elements(${rejections}::jsonb) AS t
    ),
    usage AS (
      UPDATE push_usage SET rows_booked = rows_booked + ${counts.booked}
      WHERE space_id = ${batch.spaceId} AND month = ${batch.month}
    )
    UPDATE push_batches SET booked = ${counts.booked}, duplicates = ${counts.duplicates},
      skipped_closed = ${counts.skipped_closed}, rejected = ${counts.rejected},
      accounts_created = ${counts.accounts_created}::text[]
    WHERE id = ${batch.id}`.execute(db);
}

export function lockBatch(db: Queryable, spaceId: string, batchId: string) {
  return db
    .selectFrom('push_batches')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('id', '=', batchId)
    .forUpdate()
    .executeTakeFirst();
}

export function batchRows(db: Queryable, batchId: string) {
  return db
    .selectFrom('push_rows')
    .innerJoin('ledger_entries', 'ledger_entries.id', 'push_rows.entry_id')
    .select(['push_rows.external_id', 'push_rows.entry_id', 'ledger_entries.occurred_on'])
    .where('push_rows.batch_id', '=', batchId)
    .orderBy('push_rows.external_id')
    .execute();
}

export async function markUndone(db: Queryable, batchId: string, at: Date) {
  await db
    .updateTable('push_batches')
    .set({ status: 'undone', undone_at: at })
    .where('id', '=', batchId)
    .execute();
}

/** A book's batches (of one source when named), newest first, `limit` from before `before`. */
export function listBatches(
  db: Queryable,
  spaceId: string,
  filter: { sourceName: string | undefined; before: { at: Date; id: string } | undefined; limit: number },
) {
  let query = db
    .selectFrom('push_batches')
    .innerJoin('push_sources', 'push_sources.id', 'push_batches.push_source_id')
    .selectAll('push_batches')
    .select('push_sources.name as push_source')
    .where('push_batches.space_id', '=', spaceId);
  if (filter.sourceName !== undefined) query = query.where('push_sources.name', '=', filter.sourceName);
  const before = filter.before;
  if (before !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb('push_batches.created_at', '<', before.at),
        eb.and([eb('push_batches.created_at', '=', before.at), eb('push_batches.id', '<', before.id)]),
      ]),
    );
  }
  return query
    .orderBy('push_batches.created_at', 'desc')
    .orderBy('push_batches.id', 'desc')
    .limit(filter.limit)
    .execute();
}

/** The rows a batch of this space refused, in the order they were pushed (at most 500). */
export function batchRejections(db: Queryable, spaceId: string, batchId: string) {
  return db
    .selectFrom('push_rejections')
    .select(['row_index', 'external_id', 'error', 'detail'])
    .where('space_id', '=', spaceId)
    .where('batch_id', '=', batchId)
    .orderBy('row_index')
    .execute();
}

export function findBatch(db: Queryable, spaceId: string, batchId: string) {
  return db
    .selectFrom('push_batches')
    .innerJoin('push_sources', 'push_sources.id', 'push_batches.push_source_id')
    .selectAll('push_batches')
    .select('push_sources.name as push_source')
    .where('push_batches.space_id', '=', spaceId)
    .where('push_batches.id', '=', batchId)
    .executeTakeFirst();
}
