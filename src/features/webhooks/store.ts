import { type Insertable, type NotNull, type Selectable, sql } from 'kysely';
import type { Queryable } from '../../platform/db/database.ts';
import type {
  WebhookDeliveriesTable,
  WebhookDeliveryAttemptsTable,
  WebhookSubscriptionsTable,
  WebhookTestSendsTable,
} from '../../platform/db/schema.ts';
import type {
  DeliveryStatus,
  FanOutEvent,
  PlannedDelivery,
  SubscriptionFilter,
  TargetKind,
} from './domain.ts';

// Queries of the webhooks feature. Besides its own tables it reads (never writes) the webhook
// columns of integration_keys and writes dispatched_at of outbox_events, which it owns after
// the producer's commit.

export type ClaimedEvent = FanOutEvent & { payload: Record<string, unknown>; occurredAt: Date };

/**
 * Claims up to `limit` events nobody has fanned out yet, oldest first, and marks them dispatched
 * in the same statement; the caller's transaction makes that final only with their deliveries.
 */
export async function claimUndispatched(
  db: Queryable,
  claim: { limit: number; at: Date; spaceIds?: string[] | undefined },
): Promise<ClaimedEvent[]> {
  const spaceIds = claim.spaceIds ?? null;
  const result = await sql<{
    id: string;
    space_id: string;
    channel: 'key' | 'book';
    key_id: string | null;
    event: string;
    payload: Record<string, unknown>;
    occurred_at: Date;
  }>`
    UPDATE outbox_events SET dispatched_at = ${claim.at}
    WHERE id IN (
      SELECT id FROM outbox_events
      WHERE dispatched_at IS NULL
        AND (${spaceIds}::uuid[] IS NULL OR space_id = ANY(${spaceIds}::uuid[]))
      ORDER BY created_at
      LIMIT ${claim.limit}
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id, space_id, channel, key_id, event, payload, occurred_at`.execute(db);
  return result.rows.map((row) => ({
    id: row.id,
    spaceId: row.space_id,
    channel: row.channel,
    keyId: row.key_id,
    event: row.event,
    payload: row.payload,
    occurredAt: row.occurred_at,
  }));
}

export type TargetAddress = {
  id: string;
  url: string;
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretUntil: Date | null;
};

/** Of these keys, the ones that have a webhook address and are not revoked, with that address. */
export async function liveWebhookKeys(db: Queryable, keyIds: string[]): Promise<Map<string, TargetAddress>> {
  if (keyIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('integration_keys')
    .select([
      'id',
      'webhook_url',
      'webhook_secret_sealed',
      'previous_webhook_secret_sealed',
      'previous_webhook_secret_until',
    ])
    .where('id', 'in', keyIds)
    .where('webhook_url', 'is not', null)
    .where('webhook_url', '<>', '')
    .where('revoked_at', 'is', null)
    .$narrowType<{ webhook_url: NotNull }>()
    .execute();
  return new Map(
    rows.map((row) => [
      row.id,
      {
        id: row.id,
        url: row.webhook_url,
        secretSealed: row.webhook_secret_sealed,
        previousSecretSealed: row.previous_webhook_secret_sealed,
        previousSecretUntil: row.previous_webhook_secret_until,
      },
    ]),
  );
}

export async function activeSubscriptionsOf(
  db: Queryable,
  spaceIds: string[],
): Promise<(SubscriptionFilter & TargetAddress)[]> {
  if (spaceIds.length === 0) return [];
  const rows = await db
    .selectFrom('webhook_subscriptions')
    .select([
      'id',
      'space_id',
      'events',
      'url',
      'secret_sealed',
      'previous_secret_sealed',
      'previous_secret_until',
    ])
    .where('space_id', 'in', spaceIds)
    .where('status', '=', 'active')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    spaceId: row.space_id,
    events: row.events,
    url: row.url,
    secretSealed: row.secret_sealed,
    previousSecretSealed: row.previous_secret_sealed,
    previousSecretUntil: row.previous_secret_until,
  }));
}

export type NewDelivery = PlannedDelivery & { id: string; attemptsMax: number };

/** Inserts deliveries already claimed by `lease` (the fan-out worker attempts them at once). */
export async function insertDeliveries(
  db: Queryable,
  deliveries: NewDelivery[],
  lease: { token: string; until: Date; at: Date },
): Promise<Set<string>> {
  if (deliveries.length === 0) return new Set();
  const inserted = await db
    .insertInto('webhook_deliveries')
    .values(
      deliveries.map((delivery) => ({
        id: delivery.id,
        space_id: delivery.spaceId,
        event_id: delivery.eventId,
        event: delivery.event,
        target_kind: delivery.targetKind,
        key_id: delivery.keyId,
        subscription_id: delivery.subscriptionId,
        status: 'pending' as const,
        attempts_max: delivery.attemptsMax,
        next_attempt_at: lease.at,
        leased_until: lease.until,
        lease_token: lease.token,
        created_at: lease.at,
        updated_at: lease.at,
      })),
    )
    .onConflict((conflict) => conflict.doNothing())
    .returning('id')
    .execute();
  return new Set(inserted.map((row) => row.id));
}

/** Everything needed to attempt one claimed delivery. */
export type SendableRow = {
  id: string;
  lease_token: string;
  event_id: string;
  space_id: string;
  event: string;
  target_kind: TargetKind;
  subscription_id: string | null;
  attempts: number;
  attempts_max: number;
  channel: 'key' | 'book';
  payload: Record<string, unknown>;
  occurred_at: Date;
  url: string | null;
  secret_sealed: string | null;
  previous_secret_sealed: string | null;
  previous_secret_until: Date | null;
  key_revoked_at: Date | null;
};

const SENDABLE_COLUMNS = sql`
  d.id, d.lease_token, d.event_id, d.space_id, d.event, d.target_kind, d.subscription_id, d.attempts,
  d.attempts_max, e.channel, e.payload, e.occurred_at,
  CASE WHEN d.target_kind = 'key' THEN k.webhook_url ELSE s.url END AS url,
  CASE WHEN d.target_kind = 'key' THEN k.webhook_secret_sealed ELSE s.secret_sealed END AS secret_sealed,
  CASE WHEN d.target_kind = 'key' THEN k.previous_webhook_secret_sealed
    ELSE s.previous_secret_sealed END AS previous_secret_sealed,
  CASE WHEN d.target_kind = 'key' THEN k.previous_webhook_secret_until
    ELSE s.previous_secret_until END AS previous_secret_until,
  k.revoked_at AS key_revoked_at`;

/**
 * Claims up to `limit` due deliveries in one statement: rows another worker holds (row lock or
 * unexpired lease) are skipped, so no delivery is attempted by two workers at once.
 */
export async function claimDue(
  db: Queryable,
  claim: { now: Date; limit: number; token: string; until: Date; spaceIds?: string[] },
): Promise<SendableRow[]> {
  const spaceIds = claim.spaceIds ?? null;
  const result = await sql<SendableRow>`
    WITH due AS (
      SELECT id FROM webhook_deliveries
      WHERE status = 'pending' AND next_attempt_at <= ${claim.now}
        AND (leased_until IS NULL OR leased_until <= ${claim.now})
        AND (${spaceIds}::uuid[] IS NULL OR space_id = ANY(${spaceIds}::uuid[]))
      ORDER BY next_attempt_at
      LIMIT ${claim.limit}
      FOR UPDATE SKIP LOCKED
    ), d AS (
      UPDATE webhook_deliveries w SET leased_until = ${claim.until}, lease_token = ${claim.token}
      FROM due WHERE w.id = due.id
      RETURNING w.*
    )
    SELECT ${SENDABLE_COLUMNS}
    FROM d
    JOIN outbox_events e ON e.id = d.event_id
    LEFT JOIN integration_keys k ON k.id = d.key_id
    LEFT JOIN webhook_subscriptions s ON s.id = d.subscription_id`.execute(db);
  return result.rows;
}

export type RecordedAttempt = {
  id: string;
  leaseToken: string;
  attempt: number;
  status: 'delivered' | 'pending' | 'given_up';
  nextAttemptAt: Date | null;
  statusCode: number | null;
  error: string | null;
  at: Date;
  /** Null when nothing was sent. */
  durationMs: number | null;
  /** The first 2 KB of the answer's body; null when no answer came back. */
  responseExcerpt: string | null;
};

const iso = (date: Date | null) => (date === null ? null : date.toISOString());

/**
 * Records attempts in one statement: each on its delivery and as a row of
 * webhook_delivery_attempts. Only the lease holder's result counts (for both); a delivery whose
 * subscription was paused meanwhile stays held unless this attempt delivered it.
 */
export async function recordAttempts(
  db: Queryable,
  attempts: RecordedAttempt[],
): Promise<{ id: string; subscription_id: string | null }[]> {
  if (attempts.length === 0) return [];
  const column = <T>(pick: (attempt: RecordedAttempt) => T) => attempts.map(pick);
  const result = await sql<{ id: string; subscription_id: string | null }>`
    WITH recorded AS (
      UPDATE webhook_deliveries d SET
        attempts = v.attempt,
        status = CASE WHEN d.status = 'held' AND v.status <> 'delivered' THEN 'held' ELSE v.status END,
        next_attempt_at = COALESCE(v.next_attempt_at, d.next_attempt_at),
        last_status_code = v.status_code,
        last_error = v.error,
        last_attempt_at = v.at,
        delivered_at = CASE WHEN v.status = 'delivered' THEN v.at ELSE d.delivered_at END,
        leased_until = NULL,
        lease_token = NULL,
        updated_at = v.at
      FROM unnest(
        ${column((a) => a.id)}::uuid[], ${column((a) => a.leaseToken)}::uuid[],
        ${column((a) => a.attempt)}::int[], ${column((a) => a.status)}::text[],
        ${column((a) => iso(a.nextAttemptAt))}::timestamptz[], ${column((a) => a.statusCode)}::int[],
        ${column((a) => a.error)}::text[], ${column((a) => iso(a.at))}::timestamptz[],
        ${column((a) => (a.durationMs === null ? null : Math.round(a.durationMs)))}::int[],
        ${column((a) => a.responseExcerpt)}::text[]
      ) AS v(id, token, attempt, status, next_attempt_at, status_code, error, at, duration_ms, excerpt)
      WHERE d.id = v.id AND d.lease_token = v.token
      RETURNING d.id, d.space_id, d.subscription_id, v.attempt, v.at, v.status_code, v.error,
        v.duration_ms, v.excerpt
    ), journal AS (
      INSERT INTO webhook_delivery_attempts (space_id, delivery_id, attempt, attempted_at, status_code,
        error, duration_ms, response_excerpt)
      SELECT space_id, id, attempt, at, status_code, error, duration_ms, excerpt FROM recorded
    )
    SELECT id, subscription_id FROM recorded`.execute(db);
  return result.rows;
}

export type AttemptRow = Selectable<WebhookDeliveryAttemptsTable>;

/** A delivery's attempts, first to last. */
export function listAttempts(db: Queryable, spaceId: string, deliveryId: string): Promise<AttemptRow[]> {
  return db
    .selectFrom('webhook_delivery_attempts')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('delivery_id', '=', deliveryId)
    .orderBy('attempt')
    .execute();
}

/** The event a delivery carries, as stored: enough to render the body that was sent. */
export function findDeliveryEvent(db: Queryable, spaceId: string, eventId: string) {
  return db
    .selectFrom('outbox_events')
    .select(['id', 'channel', 'event', 'payload', 'occurred_at'])
    .where('space_id', '=', spaceId)
    .where('id', '=', eventId)
    .executeTakeFirst();
}

// Test sends.

export type TestSendRow = Selectable<WebhookTestSendsTable>;

export async function insertTestSend(db: Queryable, row: Insertable<WebhookTestSendsTable>): Promise<void> {
  await db.insertInto('webhook_test_sends').values(row).execute();
}

/** A subscription's test sends from `since`, newest first. */
export function listTestSends(
  db: Queryable,
  page: { spaceId: string; subscriptionId: string; since: Date; limit: number },
): Promise<TestSendRow[]> {
  return db
    .selectFrom('webhook_test_sends')
    .selectAll()
    .where('space_id', '=', page.spaceId)
    .where('subscription_id', '=', page.subscriptionId)
    .where('sent_at', '>=', page.since)
    .orderBy('sent_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .execute();
}

/** Deletes up to `limit` test sends made before `cutoff`. */
export async function pruneTestSends(
  db: Queryable,
  prune: { cutoff: Date; limit: number; spaceIds?: string[] },
): Promise<number> {
  const spaceIds = prune.spaceIds ?? null;
  const result = await sql`
    DELETE FROM webhook_test_sends WHERE (space_id, id) IN (
      SELECT space_id, id FROM webhook_test_sends
      WHERE sent_at < ${prune.cutoff}
        AND (${spaceIds}::uuid[] IS NULL OR space_id = ANY(${spaceIds}::uuid[]))
      LIMIT ${prune.limit}
      FOR UPDATE SKIP LOCKED
    )`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

// Subscriptions: failure bookkeeping and pausing.

export async function markSubscriptionsSucceeded(db: Queryable, ids: string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await sql`
    UPDATE webhook_subscriptions SET failing_since = NULL,
      last_success_at = GREATEST(COALESCE(last_success_at, ${at}), ${at})
    WHERE id = ANY(${ids}::uuid[])`.execute(db);
}

/**
 * Records a failure: it starts a new run of failures unless one is going on, and a run with a
 * quiet gap of `quietMs` or more since its last failure starts over. A later success wins.
 */
export async function markSubscriptionsFailing(
  db: Queryable,
  ids: string[],
  failure: { at: Date; quietMs: number },
): Promise<void> {
  if (ids.length === 0) return;
  const staleBefore = new Date(failure.at.getTime() - failure.quietMs);
  await sql`
    UPDATE webhook_subscriptions SET
      failing_since = CASE
        WHEN failing_since IS NULL OR last_failure_at IS NULL OR last_failure_at < ${staleBefore}
        THEN ${failure.at} ELSE failing_since END,
      last_failure_at = GREATEST(COALESCE(last_failure_at, ${failure.at}), ${failure.at})
    WHERE id = ANY(${ids}::uuid[])
      AND (last_success_at IS NULL OR last_success_at < ${failure.at})`.execute(db);
}

/** Pauses the active ones among `ids` that have failed since `cutoff` or earlier. */
export async function pauseFailingSubscriptions(
  db: Queryable,
  ids: string[],
  cutoff: Date,
  at: Date,
): Promise<{ id: string; space_id: string; url: string; failing_since: Date }[]> {
  if (ids.length === 0) return [];
  const result = await sql<{ id: string; space_id: string; url: string; failing_since: Date }>`
    UPDATE webhook_subscriptions SET status = 'paused', paused_at = ${at}
    WHERE id = ANY(${ids}::uuid[]) AND status = 'active' AND failing_since <= ${cutoff}
    RETURNING id, space_id, url, failing_since`.execute(db);
  return result.rows;
}

/** Parks a paused subscription's pending deliveries until it resumes. */
export async function holdPendingDeliveries(db: Queryable, subscriptionId: string, at: Date): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'held', updated_at: at })
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'pending')
    .execute();
}

/** Held deliveries become due at once; their attempt count goes on from where it stopped. */
export async function releaseHeldDeliveries(
  db: Queryable,
  subscriptionId: string,
  at: Date,
): Promise<number> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: at, updated_at: at })
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'held')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

// Subscriptions: the app's CRUD.

const SUBSCRIPTION_COLUMNS = ['id', 'url', 'events', 'status', 'created_at', 'paused_at'] as const;
export type SubscriptionRow = Pick<
  Selectable<WebhookSubscriptionsTable>,
  'id' | 'url' | 'events' | 'status' | 'created_at' | 'paused_at'
>;

export async function insertSubscription(
  db: Queryable,
  row: { id: string; spaceId: string; url: string; events: string[]; secretSealed: string; at: Date },
): Promise<void> {
  await db
    .insertInto('webhook_subscriptions')
    .values({
      id: row.id,
      space_id: row.spaceId,
      url: row.url,
      events: row.events,
      secret_sealed: row.secretSealed,
      status: 'active',
      created_at: row.at,
    })
    .execute();
}

export async function countSubscriptions(db: Queryable, spaceId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_subscriptions')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('space_id', '=', spaceId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export function listSubscriptions(db: Queryable, spaceId: string): Promise<SubscriptionRow[]> {
  return db
    .selectFrom('webhook_subscriptions')
    .select(SUBSCRIPTION_COLUMNS)
    .where('space_id', '=', spaceId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export function findSubscription(db: Queryable, spaceId: string, id: string, lock = false) {
  const query = db
    .selectFrom('webhook_subscriptions')
    .select([...SUBSCRIPTION_COLUMNS, 'secret_sealed', 'previous_secret_sealed', 'previous_secret_until'])
    .where('space_id', '=', spaceId)
    .where('id', '=', id);
  return (lock ? query.forUpdate() : query).executeTakeFirst();
}

export async function deleteSubscription(db: Queryable, spaceId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_subscriptions')
    .where('space_id', '=', spaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The new secret becomes current; the one it replaces keeps signing until `until`. */
export async function rotateSubscriptionSecret(
  db: Queryable,
  target: { spaceId: string; id: string },
  rotation: { sealed: string; until: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_subscriptions')
    .set((eb) => ({
      previous_secret_sealed: eb.ref('secret_sealed'),
      previous_secret_until: rotation.until,
      secret_sealed: rotation.sealed,
    }))
    .where('space_id', '=', target.spaceId)
    .where('id', '=', target.id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The same rotation for an integration key's webhook secret. */
export async function rotateKeyWebhookSecret(
  db: Queryable,
  target: { spaceId: string; keyId: string },
  rotation: { sealed: string; until: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('integration_keys')
    .set((eb) => ({
      previous_webhook_secret_sealed: eb.ref('webhook_secret_sealed'),
      previous_webhook_secret_until: rotation.until,
      webhook_secret_sealed: rotation.sealed,
    }))
    .where('space_id', '=', target.spaceId)
    .where('id', '=', target.keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function activateSubscription(db: Queryable, spaceId: string, id: string): Promise<void> {
  await db
    .updateTable('webhook_subscriptions')
    .set({ status: 'active', paused_at: null, failing_since: null, last_failure_at: null })
    .where('space_id', '=', spaceId)
    .where('id', '=', id)
    .execute();
}

// The journal.

const DELIVERY_COLUMNS = [
  'id',
  'event_id',
  'event',
  'target_kind',
  'key_id',
  'subscription_id',
  'status',
  'attempts',
  'attempts_max',
  'next_attempt_at',
  'last_status_code',
  'last_error',
  'last_attempt_at',
  'created_at',
  'updated_at',
  'delivered_at',
] as const;

export type DeliveryRow = Pick<
  Selectable<WebhookDeliveriesTable>,
  | 'id'
  | 'event_id'
  | 'event'
  | 'target_kind'
  | 'key_id'
  | 'subscription_id'
  | 'status'
  | 'attempts'
  | 'attempts_max'
  | 'next_attempt_at'
  | 'last_status_code'
  | 'last_error'
  | 'last_attempt_at'
  | 'created_at'
  | 'updated_at'
  | 'delivered_at'
>;

/** One subscription's deliveries, newest first, from `since`, after the cursor row if given. */
export async function listDeliveries(
  db: Queryable,
  page: {
    spaceId: string;
    /** One subscription's journal, or one key's (the key channel). */
    subscriptionId?: string;
    keyId?: string;
    since: Date;
    limit: number;
    status?: DeliveryStatus;
    after?: { createdAt: Date; id: string };
  },
): Promise<DeliveryRow[]> {
  let query = db
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('space_id', '=', page.spaceId)
    .where(
      page.keyId === undefined ? 'subscription_id' : 'key_id',
      '=',
      page.keyId ?? page.subscriptionId ?? '',
    )
    .where('created_at', '>=', page.since);
  if (page.status) query = query.where('status', '=', page.status);
  const after = page.after;
  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)]),
      ]),
    );
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).execute();
}

export function findDelivery(db: Queryable, spaceId: string, id: string, lock = false) {
  const query = db
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('space_id', '=', spaceId)
    .where('id', '=', id);
  return (lock ? query.forUpdate() : query).executeTakeFirst();
}

/** Makes a delivery due now with the given budget; an expired lease is dropped with it. */
export async function scheduleRetry(
  db: Queryable,
  id: string,
  change: { attemptsMax: number; at: Date },
): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({
      status: 'pending',
      attempts_max: change.attemptsMax,
      next_attempt_at: change.at,
      updated_at: change.at,
    })
    .where('id', '=', id)
    .execute();
}

/** Deliveries of a space changed after `since` (the developer's tail), oldest change first. */
export function deliveriesChangedSince(db: Queryable, spaceId: string, since: Date, limit: number) {
  return db
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('space_id', '=', spaceId)
    .where('updated_at', '>', since)
    .orderBy('updated_at')
    .limit(limit)
    .execute();
}

/** Deletes up to `limit` fanned-out events older than `cutoff`; their deliveries go with them. */
export async function pruneEvents(
  db: Queryable,
  prune: { cutoff: Date; limit: number; spaceIds?: string[] },
): Promise<number> {
  const spaceIds = prune.spaceIds ?? null;
  const result = await sql`
    DELETE FROM outbox_events WHERE id IN (
      SELECT id FROM outbox_events
      WHERE dispatched_at IS NOT NULL AND created_at < ${prune.cutoff}
        AND (${spaceIds}::uuid[] IS NULL OR space_id = ANY(${spaceIds}::uuid[]))
      LIMIT ${prune.limit}
      FOR UPDATE SKIP LOCKED
    )`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Deliveries of a space to replay: of one event, or created at or after a time; never older than
 * `notBefore` (the journal's retention). Locked, oldest first, at most `limit`.
 */
export function deliveriesToReplay(
  db: Queryable,
  select: { spaceId: string; eventId?: string; since?: Date; notBefore: Date; limit: number },
): Promise<DeliveryRow[]> {
  let query = db
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('space_id', '=', select.spaceId)
    .where('created_at', '>=', select.notBefore);
  if (select.eventId !== undefined) query = query.where('event_id', '=', select.eventId);
  if (select.since !== undefined) query = query.where('created_at', '>=', select.since);
  return query.orderBy('created_at').orderBy('id').limit(select.limit).forUpdate().execute();
}

/** A key of the space, for its journal: whether it can still be sent to. */
export function findKeyInSpace(db: Queryable, spaceId: string, keyId: string) {
  return db
    .selectFrom('integration_keys')
    .select(['id', 'webhook_url', 'revoked_at'])
    .where('space_id', '=', spaceId)
    .where('id', '=', keyId)
    .executeTakeFirst();
}
