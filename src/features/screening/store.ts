import { sql } from 'kysely';
import { jsonRecords } from '../../platform/db/bulk.ts';
import type { Queryable } from '../../platform/db/database.ts';
import type { ScreeningEntry } from './domain.ts';

/** Entries go in by this many rows a statement (one JSON document each). */
const INSERT_BATCH = 5_000;

export type ListValidators = { etag: string | null; lastModified: string | null };

export async function insertList(
  db: Queryable,
  list: {
    id: string;
    source: string;
    publishedOn: string;
    entries: ScreeningEntry[];
    at: Date;
    validators: ListValidators;
  },
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
      etag: list.validators.etag,
      last_modified: list.validators.lastModified,
      checked_at: list.at,
      check_outcome: 'loaded',
    })
    .execute();
  for (let start = 0; start < list.entries.length; start += INSERT_BATCH) {
    const rows = list.entries.slice(start, start + INSERT_BATCH).map((entry) => ({
      list_id: list.id,
      kind: entry.kind,
      value: entry.value,
      sdn_uid: entry.sdnUid,
      listed: entry.listed,
      programs: entry.programs,
    }));
    await sql`
      INSERT INTO screening_entries (list_id, kind, value, sdn_uid, listed, programs)
      SELECT list_id, kind, value, sdn_uid, listed, programs
      FROM ${jsonRecords(rows, 'r', 'list_id uuid, kind text, value text, sdn_uid text, listed text, programs text')}`.execute(
      db,
    );
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
    .select([
      'id',
      'source',
      'published_on',
      'entries',
      'loaded_at',
      'etag',
      'last_modified',
      'checked_at',
      'check_outcome',
    ])
    .where('is_current', '=', true)
    .executeTakeFirst();
}

/** The current list under its row lock: a load compares its size with it before replacing it. */
export async function lockCurrentList(db: Queryable) {
  return db
    .selectFrom('screening_lists')
    .select(['id', 'entries'])
    .where('is_current', '=', true)
    .forUpdate()
    .executeTakeFirst();
}

/** Records a check of the list's source that changed nothing (not modified, refused, or unknown). */
export async function noteCheck(db: Queryable, listId: string, at: Date, outcome: string) {
  await db
    .updateTable('screening_lists')
    .set({ checked_at: at, check_outcome: outcome })
    .where('id', '=', listId)
    .execute();
}

/** Every entry of a list, for the in-process index. */
export async function entriesOf(db: Queryable, listId: string) {
  return db
    .selectFrom('screening_entries')
    .select(['kind', 'value', 'sdn_uid', 'listed', 'programs'])
    .where('list_id', '=', listId)
    .execute();
}

export type MatchRow = {
  spaceId: string;
  payoutId: string;
  kind: 'name' | 'address';
  sdnUid: string;
  listed: string;
  programs: string;
  score: string;
  matched: string;
  source: string;
  at: Date;
};

/** Records (or replaces) the list entry that held a payment. */
export async function recordMatch(db: Queryable, match: MatchRow) {
  const values = {
    kind: match.kind,
    sdn_uid: match.sdnUid,
    listed: match.listed,
    programs: match.programs,
    score: match.score,
    matched: match.matched,
    list_source: match.source,
    held_at: match.at,
  };
  await db
    .insertInto('payout_screening_matches')
    .values({ space_id: match.spaceId, payout_id: match.payoutId, ...values })
    .onConflict((conflict) => conflict.columns(['space_id', 'payout_id']).doUpdateSet(values))
    .execute();
}

export async function matchesOf(db: Queryable, spaceId: string, payoutIds: string[]) {
  if (payoutIds.length === 0) return [];
  return db
    .selectFrom('payout_screening_matches')
    .select(['payout_id', 'kind', 'sdn_uid', 'listed', 'programs', 'matched', 'list_source', 'held_at'])
    .select(sql<string>`score::text`.as('score'))
    .where('space_id', '=', spaceId)
    .where('payout_id', 'in', payoutIds)
    .execute();
}

export type InboundFlagRow = {
  spaceId: string;
  transferId: string;
  sdnUid: string;
  listed: string;
  programs: string;
  matched: string;
  source: string;
  at: Date;
  entryIds: string[];
};

/** Records a flagged transfer and the entries it made; a second record of it changes nothing. */
export async function insertInboundFlag(db: Queryable, flag: InboundFlagRow) {
  const inserted = await db
    .insertInto('inbound_screening_flags')
    .values({
      space_id: flag.spaceId,
      transfer_id: flag.transferId,
      sdn_uid: flag.sdnUid,
      listed: flag.listed,
      programs: flag.programs,
      matched: flag.matched,
      list_source: flag.source,
      flagged_at: flag.at,
    })
    .onConflict((conflict) => conflict.columns(['space_id', 'transfer_id']).doNothing())
    .returning('transfer_id')
    .executeTakeFirst();
  if (inserted === undefined || flag.entryIds.length === 0) return inserted !== undefined;
  await db
    .insertInto('inbound_screening_flag_entries')
    .values(
      flag.entryIds.map((entryId) => ({
        space_id: flag.spaceId,
        entry_id: entryId,
        transfer_id: flag.transferId,
      })),
    )
    .execute();
  return true;
}

/** A space's flagged transfers, newest first, with the transfer's amount, hash and state. */
export async function inboundFlagsOf(db: Queryable, spaceId: string, limit: number) {
  return db
    .selectFrom('inbound_screening_flags as f')
    .innerJoin('chain_transfers as t', 't.id', 'f.transfer_id')
    .innerJoin('accounts as a', (join) =>
      join.onRef('a.space_id', '=', 't.space_id').onRef('a.id', '=', 't.account_id'),
    )
    .select([
      'f.transfer_id',
      'f.sdn_uid',
      'f.listed',
      'f.programs',
      'f.matched',
      'f.list_source',
      'f.flagged_at',
      't.tx_hash',
      't.network',
      't.status',
      'a.id as account_id',
      'a.name as account_name',
      'a.currency',
    ])
    .select(sql<string>`t.amount::text`.as('amount'))
    .where('f.space_id', '=', spaceId)
    .orderBy('f.flagged_at', 'desc')
    .orderBy('f.transfer_id', 'desc')
    .limit(limit)
    .execute();
}

/** Which of these entries a flagged transfer made, with the entry it matched. */
export async function flaggedEntriesOf(db: Queryable, spaceId: string, entryIds: string[]) {
  if (entryIds.length === 0) return [];
  return db
    .selectFrom('inbound_screening_flag_entries as e')
    .innerJoin('inbound_screening_flags as f', (join) =>
      join.onRef('f.space_id', '=', 'e.space_id').onRef('f.transfer_id', '=', 'e.transfer_id'),
    )
    .select(['e.entry_id', 'f.transfer_id', 'f.sdn_uid', 'f.listed', 'f.programs'])
    .where('e.space_id', '=', spaceId)
    .where('e.entry_id', 'in', entryIds)
    .execute();
}

/**
 * How many entries of flagged transfers each income row (income account ref, day, currency) of
 * these days holds, for the Income screen.
 */
export async function flaggedIncomeRowsOf(db: Queryable, spaceId: string, days: string[]) {
  if (days.length === 0) return [];
  const result = await sql<{ ref: string; day: string; currency: string; flagged: string }>`
    SELECT a.ref, p.occurred_on::text AS day, p.currency, COUNT(DISTINCT e.entry_id)::text AS flagged
    FROM inbound_screening_flag_entries e
    JOIN ledger_postings p ON p.space_id = e.space_id AND p.entry_id = e.entry_id
    JOIN ledger_accounts a ON a.id = p.ledger_account_id
    WHERE e.space_id = ${spaceId} AND a.kind = 'income'
      AND p.occurred_on IN (${sql.join(days.map((day) => sql`${day}::date`))})
    GROUP BY a.ref, p.occurred_on, p.currency`.execute(db);
  return result.rows;
}
