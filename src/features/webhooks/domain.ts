import { DAY_MS } from '../../core/clock.ts';
import { BOOK_CHANNEL_EVENTS, type BookChannelEvent } from '../../core/events.ts';

// Pure rules of webhook delivery: who gets an event, what the body looks like, when the next
// attempt is due, when a delivery gives up and when a subscription pauses.

export type TargetKind = 'key' | 'subscription';
export type DeliveryStatus = 'pending' | 'held' | 'delivered' | 'given_up';
export type SubscriptionStatus = 'active' | 'paused';

/** Book-channel events (spec §6.2). A subscription with no events gets all, including later ones. */
export const BOOK_EVENTS = BOOK_CHANNEL_EVENTS;
export type BookEvent = BookChannelEvent;

/** The event a test send carries; it never comes from the outbox. */
export const TEST_EVENT = 'webhook.test';

const SECOND_MS = 1_000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;

/**
 * The wait before each attempt, measured from the failure of the one before (the first goes at
 * once). Key channel: three attempts within a minute (§6.1). Book channel: eight over about a day.
 */
export const SCHEDULES_MS: Record<TargetKind, readonly number[]> = {
  key: [0, 5 * SECOND_MS, 30 * SECOND_MS],
  subscription: [
    0,
    MINUTE_MS,
    5 * MINUTE_MS,
    15 * MINUTE_MS,
    HOUR_MS,
    3 * HOUR_MS,
    6 * HOUR_MS,
    12 * HOUR_MS,
  ],
};

export function attemptsMaxFor(kind: TargetKind): number {
  return SCHEDULES_MS[kind].length;
}

/** A subscription whose attempts have done nothing but fail for this long is paused (§3). */
export const PAUSE_AFTER_FAILING_MS = DAY_MS;

/** The journal (and the events behind it) is kept this long (§6.2). */
export const JOURNAL_RETENTION_MS = 30 * DAY_MS;

export function subscribesTo(events: readonly string[], event: string): boolean {
  return events.length === 0 || events.includes(event);
}

export type FanOutEvent = {
  id: string;
  spaceId: string;
  channel: 'key' | 'book';
  keyId: string | null;
  event: string;
};

export type SubscriptionFilter = { id: string; spaceId: string; events: readonly string[] };

export type PlannedDelivery = {
  eventId: string;
  spaceId: string;
  event: string;
  targetKind: TargetKind;
  keyId: string | null;
  subscriptionId: string | null;
};

/**
 * The deliveries one batch of events turns into: a key event goes to its key when that key has a
 * webhook address and is not revoked (`liveKeyIds`); a book event goes to every active
 * subscription of its space that asked for it.
 */
export function planDeliveries(
  events: readonly FanOutEvent[],
  liveKeyIds: ReadonlySet<string>,
  subscriptions: readonly SubscriptionFilter[],
): PlannedDelivery[] {
  const planned: PlannedDelivery[] = [];
  for (const event of events) {
    const base = { eventId: event.id, spaceId: event.spaceId, event: event.event };
    if (event.channel === 'key') {
      if (event.keyId !== null && liveKeyIds.has(event.keyId)) {
        planned.push({ ...base, targetKind: 'key', keyId: event.keyId, subscriptionId: null });
      }
      continue;
    }
    for (const subscription of subscriptions) {
      if (subscription.spaceId !== event.spaceId || !subscribesTo(subscription.events, event.event)) continue;
      planned.push({ ...base, targetKind: 'subscription', keyId: null, subscriptionId: subscription.id });
    }
  }
  return planned;
}

/** Key channel body (§6.1): event, space_id, at, data; no version. */
export function keyBody(event: string, spaceId: string, at: Date, data: Record<string, unknown>): string {
  return JSON.stringify({ event, space_id: spaceId, at: at.toISOString(), data });
}

const BOOK_RESERVED = new Set(['event', 'version', 'at']);

/** Book channel body (§6.2, §9): event, version 1, at, then the event's own fields. */
export function bookBody(event: string, at: Date, fields: Record<string, unknown>): string {
  const body: Record<string, unknown> = { event, version: 1, at: at.toISOString() };
  for (const [name, value] of Object.entries(fields)) {
    // A producer's field can never overwrite the envelope.
    if (!BOOK_RESERVED.has(name)) body[name] = value;
  }
  return JSON.stringify(body);
}

/** Any 2xx within the deadline is delivered; 1xx, 3xx (redirects are not followed), 4xx, 5xx are not. */
export function isDeliveredStatus(status: number): boolean {
  return status >= 200 && status <= 299;
}

export type AfterAttempt =
  | { status: 'delivered'; nextAttemptAt: null }
  | { status: 'pending'; nextAttemptAt: Date }
  | { status: 'given_up'; nextAttemptAt: null };

/**
 * The state of a delivery once attempt number `attempt` (from 1) ended at `at`. A failure is
 * retried on the channel's schedule until `attemptsMax` attempts were made.
 */
export function afterAttempt(
  kind: TargetKind,
  attempt: number,
  attemptsMax: number,
  delivered: boolean,
  at: Date,
): AfterAttempt {
  if (delivered) return { status: 'delivered', nextAttemptAt: null };
  if (attempt >= attemptsMax) return { status: 'given_up', nextAttemptAt: null };
  const schedule = SCHEDULES_MS[kind];
  const waitMs = schedule[Math.min(attempt, schedule.length - 1)] ?? 0;
  return { status: 'pending', nextAttemptAt: new Date(at.getTime() + waitMs) };
}

/** True when a subscription failing since `failingSince` has done so for a whole day at `now`. */
export function shouldPause(failingSince: Date | null, now: Date): boolean {
  return failingSince !== null && now.getTime() - failingSince.getTime() >= PAUSE_AFTER_FAILING_MS;
}

/**
 * A person's retry: one more attempt at once. A finished delivery (delivered or given up) gets
 * exactly one; a pending one keeps its remaining schedule and is only moved forward.
 */
export function retryBudget(status: DeliveryStatus, attempts: number, attemptsMax: number): number {
  return status === 'pending' ? Math.max(attemptsMax, attempts + 1) : attempts + 1;
}

/** After a rotation the old secret keeps signing beside the new one for this long. */
export const SECRET_OVERLAP_MS = DAY_MS;

/** A target's secrets as stored: the current one, and the one it replaced while it overlaps. */
export type SecretsOf<T> = { current: T; previous: T | null; previousUntil: Date | null };

/**
 * The secrets that sign a send at `now`: the current one, then the replaced one while the
 * rotation's overlap lasts (it ends at `previousUntil`, exclusive).
 */
export function signingSecrets<T>(secrets: SecretsOf<T>, now: Date): [T, ...T[]] {
  const { current, previous, previousUntil } = secrets;
  const overlapping = previous !== null && previousUntil !== null && now < previousUntil;
  return overlapping ? [current, previous] : [current];
}

/** When a secret replaced at `now` stops signing. */
export function overlapEnd(now: Date): Date {
  return new Date(now.getTime() + SECRET_OVERLAP_MS);
}

/** How much of an answer's body the journal keeps, in bytes. */
export const RESPONSE_EXCERPT_BYTES = 2_048;

/**
 * The journal's excerpt of an answer: its first 2 KB read as UTF-8 text. A character cut at the
 * end is dropped, bytes that are not UTF-8 read as U+FFFD and NUL characters (which PostgreSQL
 * text cannot hold) are removed, so the excerpt never has more characters than bytes read.
 */
export function responseExcerpt(body: Uint8Array): string {
  const head = body.subarray(0, RESPONSE_EXCERPT_BYTES);
  // `stream: true` holds back an incomplete last character instead of emitting U+FFFD for it.
  return new TextDecoder('utf-8').decode(head, { stream: true }).replaceAll('\u0000', '');
}

/** The body of a delivery of a stored event, the same bytes at every attempt. */
export function deliveryBody(event: {
  channel: 'key' | 'book';
  event: string;
  spaceId: string;
  occurredAt: Date;
  payload: Record<string, unknown>;
}): string {
  return event.channel === 'key'
    ? keyBody(event.event, event.spaceId, event.occurredAt, event.payload)
    : bookBody(event.event, event.occurredAt, event.payload);
}
