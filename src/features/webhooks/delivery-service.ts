import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import type { SecretBox } from '../../platform/crypto.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import type { Resolver } from '../../platform/net/public-address.ts';
import { type PostResult, SafeSender } from '../../platform/net/safe-post.ts';
import { expandEventGroups } from '../../platform/outbox/outbox.ts';
import { insertNotification } from '../notifications/index.ts';
import { listOwnerIds } from '../spaces/index.ts';
import {
  afterAttempt,
  attemptsMaxFor,
  deliveryBody,
  isDeliveredStatus,
  JOURNAL_RETENTION_MS,
  PAUSE_AFTER_FAILING_MS,
  planDeliveries,
  responseExcerpt,
  signingSecrets,
  type TargetKind,
} from './domain.ts';
import { signBody, standardHeaders } from './signature.ts';
import * as store from './store.ts';

// The delivery use cases the workers call: fan an event out into deliveries, claim due ones,
// attempt one, record what happened (and pause a subscription after a day of failures), prune.

export type Senders = { key: SafeSender; subscription: SafeSender };

export type DeliveryDeps = {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  senders: Senders;
  logger?: Logger | undefined;
};

/**
 * Key webhooks go to any public https address; subscriptions also need port 443 (§6). The
 * development switch admits http and loopback, and then no port rule applies.
 */
export function createSenders(options: {
  allowPrivate: boolean;
  allowList?: readonly string[] | undefined;
  resolver: Resolver;
  timeoutMs?: number;
  tls?: { ca?: string | Buffer };
}): Senders {
  const common = { resolver: options.resolver, timeoutMs: options.timeoutMs, tls: options.tls };
  const allowList = options.allowList ?? [];
  return {
    key: new SafeSender({ ...common, policy: { allowPrivate: options.allowPrivate, allowList } }),
    subscription: new SafeSender({
      ...common,
      policy: { allowPrivate: options.allowPrivate, allowList, requirePort443: !options.allowPrivate },
    }),
  };
}

export function closeSenders(senders: Senders): Promise<unknown> {
  return Promise.all([senders.key.close(), senders.subscription.close()]);
}

export type Sendable = store.SendableRow;
/** A claim's size and duration; `spaceIds` limits a worker to some spaces (tests, dedicated workers). */
export type Lease = { limit: number; leaseMs: number; spaceIds?: string[] | undefined };

const unique = (values: string[]) => [...new Set(values)];

/** Event groups (a pushed batch's hundreds of events) turned into events per fan-out round. */
const EVENT_GROUPS_PER_ROUND = 4;

/**
 * Turns up to `limit` new events into deliveries in one transaction, claimed by this worker so it
 * can attempt them at once. A crash before commit leaves the events for another worker; a crash
 * after it leaves leased deliveries whose lease lapses.
 */
export async function fanOut(
  deps: DeliveryDeps,
  lease: Lease,
): Promise<{ events: number; sendables: Sendable[] }> {
  const now = deps.clock.now();
  const token = randomUUID();
  return deps.db.transaction().execute(async (tx) => {
    await expandEventGroups(tx, { limit: EVENT_GROUPS_PER_ROUND, spaceIds: lease.spaceIds });
    const events = await store.claimUndispatched(tx, {
      limit: lease.limit,
      at: now,
      spaceIds: lease.spaceIds,
    });
    if (events.length === 0) return { events: 0, sendables: [] };
    const keyIds = unique(
      events.flatMap((event) => (event.channel === 'key' && event.keyId ? [event.keyId] : [])),
    );
    const spaceIds = unique(events.filter((event) => event.channel === 'book').map((event) => event.spaceId));
    const keys = await store.liveWebhookKeys(tx, keyIds);
    const subscriptions = await store.activeSubscriptionsOf(tx, spaceIds);
    const planned = planDeliveries(events, new Set(keys.keys()), subscriptions).map((delivery) => ({
      ...delivery,
      id: randomUUID(),
      attemptsMax: attemptsMaxFor(delivery.targetKind),
    }));
    const until = new Date(now.getTime() + lease.leaseMs);
    const inserted = await store.insertDeliveries(tx, planned, { token, until, at: now });
    const byId = new Map(events.map((event) => [event.id, event]));
    const addresses = new Map<string, store.TargetAddress>([
      ...keys,
      ...subscriptions.map((sub) => [sub.id, sub] as const),
    ]);
    const sendables = planned
      .filter((delivery) => inserted.has(delivery.id))
      .map((delivery) =>
        sendableOf(delivery, defined(byId.get(delivery.eventId), "a delivery's event"), addresses, token),
      );
    return { events: events.length, sendables };
  });
}

function sendableOf(
  delivery: store.NewDelivery,
  event: store.ClaimedEvent,
  addresses: Map<string, store.TargetAddress>,
  token: string,
): Sendable {
  const address = addresses.get(defined(delivery.keyId ?? delivery.subscriptionId, "a delivery's target"));
  return {
    id: delivery.id,
    lease_token: token,
    event_id: event.id,
    space_id: event.spaceId,
    event: event.event,
    target_kind: delivery.targetKind,
    subscription_id: delivery.subscriptionId,
    attempts: 0,
    attempts_max: delivery.attemptsMax,
    channel: event.channel,
    payload: event.payload,
    occurred_at: event.occurredAt,
    url: address?.url ?? null,
    secret_sealed: address?.secretSealed ?? null,
    previous_secret_sealed: address?.previousSecretSealed ?? null,
    previous_secret_until: address?.previousSecretUntil ?? null,
    key_revoked_at: null,
  };
}

/** Claims up to `limit` due deliveries (retries, and first attempts whose worker died). */
export function claimDueDeliveries(deps: DeliveryDeps, lease: Lease): Promise<Sendable[]> {
  const now = deps.clock.now();
  return store.claimDue(deps.db, {
    now,
    limit: lease.limit,
    token: randomUUID(),
    until: new Date(now.getTime() + lease.leaseMs),
    spaceIds: lease.spaceIds,
  });
}

export type Attempted = store.RecordedAttempt & { targetKind: TargetKind; subscriptionId: string | null };

export type SignedSend = {
  event: string;
  eventId: string;
  attempt: number;
  body: Buffer;
  /** The current secret first, then the replaced one while a rotation overlaps. */
  secrets: readonly [string, ...string[]];
  at: Date;
};

/**
 * The headers of every webhook POST: the spec's (§6, and DECISIONS for the key channel's extra
 * two), whose single signature is under the current secret, and the Standard Webhooks ones,
 * which carry a signature under every secret in `secrets`.
 */
export function webhookHeaders(send: SignedSend) {
  return {
    'content-type': 'application/json',
    'user-agent': 'Tollbook-Webhooks/1',
    'x-service-event': send.event,
    'x-service-event-id': send.eventId,
    'x-service-delivery-attempt': String(send.attempt),
    'x-service-signature': signBody(send.secrets[0], send.body),
    ...standardHeaders(send.secrets, send.eventId, send.at, send.body),
  };
}

/** Renders, signs and posts one delivery; never throws for the receiver's faults. */
export async function attemptDelivery(deps: DeliveryDeps, row: Sendable): Promise<Attempted> {
  const attempt = row.attempts + 1;
  const base = { id: row.id, leaseToken: row.lease_token, attempt, targetKind: row.target_kind };
  const meta = { ...base, subscriptionId: row.subscription_id };
  if (row.url === null || row.secret_sealed === null || row.key_revoked_at !== null) {
    // The key was revoked (or lost its address) after the event: nothing is sent, and retrying
    // would not change that.
    const error = 'The key was revoked or has no webhook address; nothing was sent.';
    return {
      ...meta,
      status: 'given_up',
      nextAttemptAt: null,
      statusCode: null,
      error,
      at: deps.clock.now(),
      durationMs: null,
      responseExcerpt: null,
    };
  }
  const body = Buffer.from(
    deliveryBody({
      channel: row.channel,
      event: row.event,
      spaceId: row.space_id,
      occurredAt: row.occurred_at,
      payload: row.payload,
    }),
  );
  const secrets = openSigningSecrets(deps, { ...row, secret_sealed: row.secret_sealed });
  if (secrets === null) {
    // Sealed under another master key: a configuration fault, so the attempt fails and is retried.
    const error = 'The signing secret cannot be opened with this MASTER_KEY; nothing was sent.';
    const at = deps.clock.now();
    return {
      ...meta,
      ...afterAttempt(row.target_kind, attempt, row.attempts_max, false, at),
      statusCode: null,
      error,
      at,
      durationMs: null,
      responseExcerpt: null,
    };
  }
  const sender = row.target_kind === 'key' ? deps.senders.key : deps.senders.subscription;
  const send = { event: row.event, eventId: row.event_id, attempt, body, secrets, at: deps.clock.now() };
  const result = await sender.post(row.url, body, webhookHeaders(send));
  const { statusCode, error, delivered } = judgeResult(result);
  const at = deps.clock.now();
  const next = afterAttempt(row.target_kind, attempt, row.attempts_max, delivered, at);
  return { ...meta, ...next, statusCode, error, at, ...answerOf(result) };
}

/** What the journal keeps of an answer: how long the exchange took and the body's first 2 KB. */
export function answerOf(result: PostResult): { durationMs: number | null; responseExcerpt: string | null } {
  if (result.kind === 'refused') return { durationMs: null, responseExcerpt: null };
  const durationMs = Math.max(0, Math.round(result.durationMs));
  return {
    durationMs,
    responseExcerpt: result.kind === 'answered' ? responseExcerpt(result.body) : null,
  };
}

/** A target's stored secrets (a subscription's, or a key's under the same names). */
export type SealedSecrets = {
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_until: Date | null;
};

/**
 * The secrets that sign a send now, opened; null when one of them is sealed under another master
 * key (then nothing is sent: a signature under only some secrets would fail receivers that hold
 * the others).
 */
export function openSigningSecrets(
  deps: Pick<DeliveryDeps, 'secrets' | 'clock'>,
  target: SealedSecrets,
): [string, ...string[]] | null {
  const sealed = signingSecrets(
    {
      current: target.secret_sealed,
      previous: target.previous_secret_sealed,
      previousUntil: target.previous_secret_until,
    },
    deps.clock.now(),
  );
  try {
    const [current, ...previous] = sealed;
    return [deps.secrets.open(current), ...previous.map((each) => deps.secrets.open(each))];
  } catch {
    return null;
  }
}

/** What an attempt's result means for the journal. */
export function judgeResult(result: PostResult): {
  statusCode: number | null;
  error: string | null;
  delivered: boolean;
} {
  if (result.kind === 'refused')
    return { statusCode: null, error: `Address refused: ${result.reason}`, delivered: false };
  if (result.kind === 'failed') return { statusCode: null, error: result.error, delivered: false };
  if (isDeliveredStatus(result.status)) return { statusCode: result.status, error: null, delivered: true };
  const why =
    result.status >= 300 && result.status < 400 ? 'a redirect, which is not followed' : 'not a 2xx answer';
  return { statusCode: result.status, error: `HTTP ${result.status}: ${why}.`, delivered: false };
}

/**
 * Records a batch of attempts (only those whose lease is still held count), then keeps each
 * subscription's failure clock and pauses the ones that have only failed for a day.
 */
export async function recordAttempts(deps: DeliveryDeps, attempts: Attempted[]): Promise<void> {
  const applied = new Set((await store.recordAttempts(deps.db, attempts)).map((row) => row.id));
  const latestSuccess = new Map<string, Date>();
  const earliestFailure = new Map<string, Date>();
  for (const attempt of attempts) {
    if (attempt.subscriptionId === null || !applied.has(attempt.id)) continue;
    const target = attempt.status === 'delivered' ? latestSuccess : earliestFailure;
    const known = target.get(attempt.subscriptionId);
    const keepLater = attempt.status === 'delivered';
    if (!known || (keepLater ? attempt.at > known : attempt.at < known))
      target.set(attempt.subscriptionId, attempt.at);
  }
  if (latestSuccess.size === 0 && earliestFailure.size === 0) return;
  await deps.db.transaction().execute(async (tx) => {
    for (const [id, at] of latestSuccess) await store.markSubscriptionsSucceeded(tx, [id], at);
    const failing = [...earliestFailure].filter(([id]) => !latestSuccess.has(id));
    for (const [id, at] of failing) {
      await store.markSubscriptionsFailing(tx, [id], { at, quietMs: PAUSE_AFTER_FAILING_MS });
    }
    await pauseFailing(
      deps,
      tx,
      failing.map(([id]) => id),
    );
  });
}

async function pauseFailing(deps: DeliveryDeps, tx: Queryable, ids: string[]): Promise<void> {
  const now = deps.clock.now();
  const cutoff = new Date(now.getTime() - PAUSE_AFTER_FAILING_MS);
  const paused = await store.pauseFailingSubscriptions(tx, ids, cutoff, now);
  for (const subscription of paused) {
    await store.holdPendingDeliveries(tx, subscription.id, now);
    // Each pause is its own notification (subject), so a second pause after a resume is told too.
    // Mail follows when the service sends mail; until then the owner sees it in the app.
    const subject = randomUUID();
    for (const userId of await listOwnerIds(tx, subscription.space_id)) {
      await insertNotification(tx, {
        spaceId: subscription.space_id,
        userId,
        kind: 'webhook_subscription_paused',
        subjectId: subject,
        payload: {
          subscription_id: subscription.id,
          url: subscription.url,
          failing_since: subscription.failing_since.toISOString(),
          paused_at: now.toISOString(),
        },
        at: now,
      });
    }
    deps.logger?.warn(
      { subscription: subscription.id },
      'webhook subscription paused after a day of failures',
    );
  }
}

/**
 * Deletes events (and with them their deliveries and attempts) and test sends older than the
 * journal keeps, in bounded steps.
 */
export async function pruneJournal(
  deps: Pick<DeliveryDeps, 'db' | 'clock'>,
  options: { batchSize?: number; spaceIds?: string[] | undefined } = {},
): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - JOURNAL_RETENTION_MS);
  const limit = options.batchSize ?? 1_000;
  let total = 0;
  for (let round = 0; round < 100; round += 1) {
    const deleted = await store.pruneEvents(deps.db, { cutoff, limit, spaceIds: options.spaceIds });
    total += deleted;
    if (deleted < limit) break;
  }
  for (let round = 0; round < 100; round += 1) {
    const deleted = await store.pruneTestSends(deps.db, { cutoff, limit, spaceIds: options.spaceIds });
    total += deleted;
    if (deleted < limit) break;
  }
  return total;
}
