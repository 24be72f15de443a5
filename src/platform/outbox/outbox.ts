import { randomUUID } from 'node:crypto';
import { type RawBuilder, sql } from 'kysely';
import { assert } from '../../core/assert.ts';
import { uuidv7 } from '../crypto.ts';
import { documentRows, recordsJson, rowsDocument } from '../db/bulk.ts';
import type { Queryable } from '../db/database.ts';
import type { Rider } from '../db/rider.ts';
import type { BookOutboxEvent, KeyOutboxEvent } from './events.ts';

// Side effects happen after commit: a change that should tell the world writes an event row in
// its own transaction, and the webhooks workers deliver it later (at least once).

export type { BookChannelEvent, KeyChannelEvent } from '../../core/events.ts';

/** An event for the outbox; build it with its constructor in ./events.ts. */
export type OutboxEvent = KeyOutboxEvent | BookOutboxEvent;

const EVENT_COLUMNS =
  'id uuid, space_id uuid, channel text, key_id uuid, event text, payload json, at timestamptz';

/**
 * Records events inside the caller's transaction, one row each, in one statement. `data` (key
 * channel) and `fields` (book channel) must already be spelled for the wire: amounts as decimal
 * strings, ids as UUIDs. A producer of hundreds of events at once writes an event group instead.
 */
export async function enqueueEvents(tx: Queryable, events: OutboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  await sql`${eventsInsert(events, sql``)}`.execute(tx);
}

/**
 * The same events as a rider of another statement (a settlement's ledger entry): written from
 * the host's step, so they exist exactly when the host row does, in the host's round trip.
 */
export function eventsRider(events: OutboxEvent[]): Rider {
  assert(events.length > 0, 'An events rider carries at least one event');
  return (step) => eventsInsert(events, sql`, ${step}`);
}

function eventsInsert(events: OutboxEvent[], from: RawBuilder<unknown>) {
  const document = rowsDocument(
    events.map((e) => ({
      id: uuidv7(),
      space_id: e.spaceId,
      channel: e.channel,
      key_id: e.channel === 'key' ? e.keyId : null,
      event: e.event,
      payload: e.channel === 'key' ? e.data : e.fields,
      at: e.at.toISOString(),
    })),
    EVENT_COLUMNS,
  );
  return sql`
    INSERT INTO outbox_events (id, space_id, channel, key_id, event, payload, occurred_at, created_at)
    SELECT t.id, t.space_id, t.channel, t.key_id, t.event, t.payload, t.at, t.at
    FROM ${documentRows(document, 't', EVENT_COLUMNS)}${from}`;
}

export async function enqueueEvent(tx: Queryable, event: OutboxEvent): Promise<string> {
  const id = randomUUID();
  await tx
    .insertInto('outbox_events')
    .values({
      id,
      space_id: event.spaceId,
      channel: event.channel,
      key_id: event.channel === 'key' ? event.keyId : null,
      event: event.event,
      payload: JSON.stringify(event.channel === 'key' ? event.data : event.fields),
      occurred_at: event.at,
      created_at: event.at,
    })
    .execute();
  return id;
}

/**
 * Many events of one space and channel (a pushed batch writes one per row), spelled as one group:
 * a single row for the producer's transaction to write. Pure, so a producer can build it while the
 * database is busy with something else.
 */
export type EventGroup = {
  spaceId: string;
  channel: 'key' | 'book';
  keyId: string | null;
  at: Date;
  document: string;
};

export function eventGroup(events: OutboxEvent[]): EventGroup | undefined {
  const first = events[0];
  if (first === undefined) return undefined;
  const keyId = first.channel === 'key' ? first.keyId : null;
  for (const e of events) {
    assert(
      e.spaceId === first.spaceId &&
        e.channel === first.channel &&
        (e.channel === 'key' ? e.keyId : null) === keyId &&
        e.at.getTime() === first.at.getTime(),
      'An event group holds events of one space, channel, key and moment',
    );
  }
  const pairs = events.map((e) => [e.event, e.channel === 'key' ? e.data : e.fields]);
  return {
    spaceId: first.spaceId,
    channel: first.channel,
    keyId,
    at: first.at,
    document: recordsJson(pairs),
  };
}

/** The insert of an event group, to run alone (`insertEventGroup`) or inside a larger statement. */
export function eventGroupInsert(tx: Queryable, group: EventGroup) {
  return tx.insertInto('outbox_event_groups').values({
    id: uuidv7(),
    space_id: group.spaceId,
    channel: group.channel,
    key_id: group.keyId,
    events: group.document,
    occurred_at: group.at,
    created_at: group.at,
  });
}

export async function insertEventGroup(tx: Queryable, group: EventGroup | undefined): Promise<void> {
  if (group === undefined) return;
  await eventGroupInsert(tx, group).execute();
}

/**
 * Turns up to `limit` event groups, oldest first, into ordinary outbox_events rows in the caller's
 * transaction (the webhooks fan-out, just before it claims events). Groups another worker is
 * expanding are skipped; a group is gone once its events are rows, so each event is written once.
 */
export async function expandEventGroups(
  tx: Queryable,
  claim: { limit: number; spaceIds?: string[] | undefined },
): Promise<number> {
  const spaceIds = claim.spaceIds ?? null;
  const result = await sql`
    WITH taken AS (
      DELETE FROM outbox_event_groups WHERE id IN (
        SELECT id FROM outbox_event_groups
        WHERE ${spaceIds}::uuid[] IS NULL OR space_id = ANY(${spaceIds}::uuid[])
        ORDER BY created_at
        LIMIT ${claim.limit}
        FOR UPDATE SKIP LOCKED
      )
      RETURNING space_id, channel, key_id, events, occurred_at, created_at
    )
    INSERT INTO outbox_events (id, space_id, channel, key_id, event, payload, occurred_at, created_at)
    SELECT gen_random_uuid(), g.space_id, g.channel, g.key_id, e.pair->>0, e.pair->1, g.occurred_at, g.created_at
    FROM taken g, json_array_elements(g.events) AS e (pair)`.execute(tx);
  return Number(result.numAffectedRows ?? 0n);
}
