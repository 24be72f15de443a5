import { sql } from 'kysely';
import { recordsJson } from '../../platform/db/bulk.ts';
import type { Queryable } from '../../platform/db/database.ts';

export async function insertBatch(
  db: Queryable,
  batch: { id: string; spaceId: string; pushSourceId: string; keyId: string; rowsTotal: number; at: Date },
) {
  await db
    .insertInto('push_batches')
    .values({
      id: batch.id,
      space_id: batch.spaceId,
      push_source_id: batch.pushSourceId,
      key_id: batch.keyId,
      status: 'booked',
      rows_total: batch.rowsTotal,
      booked: 0,
      duplicates: 0,
      skipped_closed: 0,
      rejected: 0,
      accounts_created: [],
      created_at: batch.at,
    })
    .execute();
}

/**
 * Makes the caller's transaction the only one filing for this source until it ends: the batches
 * of one source queue here, so what `filedExternalIds` reads next is every earlier batch's work.
 */
export async function lockSource(db: Queryable, pushSourceId: string) {
  await sql`SELECT 1 FROM push_sources WHERE id = ${pushSourceId} FOR NO KEY UPDATE`.execute(db);
}

/**
 * Of these external_ids, the ones the source has filed already (call after `lockSource`). The ids
 * go in as one array so each is looked up by key: joined as a set, the planner may read every row
 * the source ever filed instead.
 */
export async function filedExternalIds(
  db: Queryable,
  pushSourceId: string,
  externalIds: string[],
): Promise<Set<string>> {
  if (externalIds.length === 0) return new Set();
  const result = await sql<{ external_id: string }>`
    SELECT external_id FROM push_rows
    WHERE push_source_id = ${pushSourceId}
      AND external_id = ANY (ARRAY(SELECT jsonb_array_elements_text(${recordsJson(externalIds)}::jsonb)))`.execute(
    db,
  );
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

/**
 * This month's usage, locked for the rest of the transaction so concurrent batches queue: one
 * statement creates the month's row or locks the one there (the no-op update takes the lock).
 */
export async function lockUsage(db: Queryable, spaceId: string, month: string): Promise<number> {
  const result = await sql<{ rows_booked: number }>`
    INSERT INTO push_usage (space_id, month, rows_booked) VALUES (${spaceId}, ${month}, 0)
    ON CONFLICT (space_id, month) DO UPDATE SET rows_booked = push_usage.rows_booked
    RETURNING rows_booked`.execute(db);
  return result.rows[0]!.rows_booked;
}

/**
 * Records a batch, after its entries, in one statement: its booked rows (`document`, see
 * `pushRowsDocument`; the database checks each names an entry of its space), the month's usage,
 * and the batch's counts. The source is locked, so an id already filed here would be a bug, and
 * the primary key says so.
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
) {
  const { counts } = batch;
  await sql`
    WITH pushed AS (
      INSERT INTO push_rows (push_source_id, external_id, space_id, batch_id, entry_id)
      SELECT ${batch.pushSourceId}::uuid, t->>0, ${batch.spaceId}::uuid, ${batch.id}::uuid, (t->>1)::uuid
      FROM jsonb_array_elements(${document}::jsonb) AS t
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

export function listBatches(db: Queryable, spaceId: string, sourceName: string | undefined) {
  let query = db
    .selectFrom('push_batches')
    .innerJoin('push_sources', 'push_sources.id', 'push_batches.push_source_id')
    .selectAll('push_batches')
    .select('push_sources.name as push_source')
    .where('push_batches.space_id', '=', spaceId);
  if (sourceName !== undefined) query = query.where('push_sources.name', '=', sourceName);
  return query.orderBy('push_batches.created_at', 'desc').limit(200).execute();
}
