import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { uuidv7 } from '../crypto.ts';
import { documentRows, rowsDocument } from '../db/bulk.ts';
import type { Queryable } from '../db/database.ts';

// Side effects happen after commit: a change that should tell the world writes an event row in
// its own transaction, and the webhooks workers deliver it later (at least once).

/** Key channel (spec §6.1): to the webhook address of the key that owns the object. */
export type KeyChannelEvent =
  | 'payment_request.paid'
  | 'invoice.paid'
  | 'invoice.claimed_paid'
  | 'invoice.deferral_requested'
  | 'client.question'
  | 'client.file';

/** Book channel (spec §6.2): to the space's subscriptions. */
export type BookChannelEvent =
  | 'money.in'
  | 'money.out'
  | 'invoice.paid'
  | 'payout.executed'
  | 'payment.awaiting_approval'
  | 'payment.blocked';

export type OutboxEvent =
  | {
      channel: 'key';
      spaceId: string;
      keyId: string;
      event: KeyChannelEvent;
      data: Record<string, unknown>;
      at: Date;
    }
  | { channel: 'book'; spaceId: string; event: BookChannelEvent; fields: Record<string, unknown>; at: Date };

/**
 * Records events inside the caller's transaction, many in one statement (a pushed batch writes
 * hundreds). `data` (key channel) and `fields` (book channel) must already be spelled for the
 * wire: amounts as decimal strings, ids as UUIDs.
 */
export async function enqueueEvents(tx: Queryable, events: OutboxEvent[]): Promise<void> {
  await insertEventDocument(tx, eventDocument(events));
}

const EVENT_COLUMNS =
  'id uuid, space_id uuid, channel text, key_id uuid, event text, payload json, at timestamptz';

/** Events spelled as the one JSON document `insertEventDocument` files, for building ahead. */
export function eventDocument(events: OutboxEvent[]): string {
  return rowsDocument(
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
}

export async function insertEventDocument(tx: Queryable, document: string): Promise<void> {
  if (document === '[]') return;
  await sql`
    INSERT INTO outbox_events (id, space_id, channel, key_id, event, payload, occurred_at, created_at)
    SELECT id, space_id, channel, key_id, event, payload, at, at FROM ${documentRows(document, 't', EVENT_COLUMNS)}`.execute(
    tx,
  );
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
