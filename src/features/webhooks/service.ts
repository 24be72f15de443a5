import { randomUUID } from 'node:crypto';
import { defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { randomSecret, type SecretBox } from '../../platform/crypto.ts';
import type { Db } from '../../platform/db/database.ts';
import {
  checkPublicUrl,
  DEVELOPMENT_SWITCH_HINT,
  developmentSwitchWouldAdmit,
  type Resolver,
} from '../../platform/net/public-address.ts';
import { lockSpacePlan, requireAdministrator, subscriptionAllowance } from '../spaces/index.ts';
import {
  answerOf,
  judgeResult,
  openSigningSecrets,
  type Senders,
  webhookHeaders,
} from './delivery-service.ts';
import {
  type BookEvent,
  bookBody,
  type DeliveryStatus,
  deliveryBody,
  JOURNAL_RETENTION_MS,
  overlapEnd,
  retryBudget,
  TEST_EVENT,
} from './domain.ts';
import * as store from './store.ts';

// The owner's side of book subscriptions (spec §6.2, DECISIONS "App API"): create, list, delete,
// rotate the secret, resume, read the journal, retry a delivery, send a signed test.

export type WebhooksDeps = {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  resolver: Resolver;
  webhookAllowPrivate: boolean;
  webhookAllowList?: readonly string[] | undefined;
  /** False in development: a refusal the development switch would lift names it. */
  production?: boolean | undefined;
  senders: Senders;
};

const SECRET_PREFIX = 'whsec_';

function present(row: store.SubscriptionRow) {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    status: row.status,
    created_at: row.created_at.toISOString(),
    paused_at: row.paused_at ? row.paused_at.toISOString() : null,
  };
}

/**
 * Public https on port 443; the development switch admits http and loopback on any port, and the
 * operator's allow list admits its own ranges (an address literal in it: http and any port too).
 */
async function checkSubscriptionUrl(deps: WebhooksDeps, raw: string): Promise<string> {
  const allowPrivate = deps.webhookAllowPrivate;
  const policy = { allowPrivate, allowList: deps.webhookAllowList ?? [], requirePort443: !allowPrivate };
  const verdict = await checkPublicUrl(raw, policy, deps.resolver);
  if (!verdict.ok) {
    const hint =
      deps.production === false && (await developmentSwitchWouldAdmit(raw, policy, deps.resolver))
        ? ` ${DEVELOPMENT_SWITCH_HINT}`
        : '';
    throw new AppError(
      'webhook_address_not_public',
      `The webhook address is refused: ${verdict.reason}${hint}`,
      {
        field: 'url',
      },
    );
  }
  return verdict.url.toString();
}

async function requireSubscription(deps: WebhooksDeps, spaceId: string, subscriptionId: string) {
  const row = await store.findSubscription(deps.db, spaceId, subscriptionId);
  if (!row) throw new AppError('not_found', 'No such subscription in this space.');
  return row;
}

export async function createSubscription(
  deps: WebhooksDeps,
  actorId: string,
  spaceId: string,
  input: { url: string; events: BookEvent[] },
) {
  await requireAdministrator(deps.db, spaceId, actorId);
  const url = await checkSubscriptionUrl(deps, input.url);
  const secret = randomSecret(SECRET_PREFIX);
  const id = randomUUID();
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (tx) => {
    const { plan, packs } = await lockSpacePlan(tx, spaceId);
    const allowance = subscriptionAllowance(plan, packs);
    if (allowance === 0) {
      throw new AppError(
        'plan_required',
        `Event subscriptions need the Pro plan or higher; this space is on ${plan}.`,
        {
          plan,
        },
      );
    }
    if ((await store.countSubscriptions(tx, spaceId)) >= allowance) {
      throw new AppError(
        'subscription_limit_reached',
        `This space's plan allows ${allowance} event subscriptions; delete one or add a pack first.`,
        { limit: allowance },
      );
    }
    const events = [...new Set(input.events)];
    await store.insertSubscription(tx, {
      id,
      spaceId,
      url,
      events,
      secretSealed: deps.secrets.seal(secret),
      at: now,
    });
  });
  return { ...present((await requireSubscription(deps, spaceId, id)) as store.SubscriptionRow), secret };
}

export async function listSubscriptions(deps: WebhooksDeps, actorId: string, spaceId: string) {
  await requireAdministrator(deps.db, spaceId, actorId);
  return (await store.listSubscriptions(deps.db, spaceId)).map(present);
}

/** Deletes a subscription and, with it, its journal; nothing more is sent to it. */
export async function deleteSubscription(deps: WebhooksDeps, actorId: string, spaceId: string, id: string) {
  await requireAdministrator(deps.db, spaceId, actorId);
  if (!(await store.deleteSubscription(deps.db, spaceId, id))) {
    throw new AppError('not_found', 'No such subscription in this space.');
  }
  return { id, deleted: true };
}

/**
 * A new secret signs every attempt from now on, retries of older events included; the replaced
 * one keeps signing beside it (Standard Webhooks header) for the overlap. A second rotation
 * within the overlap ends the oldest secret's at once.
 */
export async function rotateSecret(deps: WebhooksDeps, actorId: string, spaceId: string, id: string) {
  await requireAdministrator(deps.db, spaceId, actorId);
  const secret = randomSecret(SECRET_PREFIX);
  const until = overlapEnd(deps.clock.now());
  const rotation = { sealed: deps.secrets.seal(secret), until };
  if (!(await store.rotateSubscriptionSecret(deps.db, { spaceId, id }, rotation))) {
    throw new AppError('not_found', 'No such subscription in this space.');
  }
  const row = await requireSubscription(deps, spaceId, id);
  return { ...present(row), secret, previous_secret_until: until.toISOString() };
}

/** The key channel's rotation: the same overlap, for the key's webhook secret. */
export async function rotateKeyWebhookSecret(
  deps: WebhooksDeps,
  actorId: string,
  ids: { spaceId: string; keyId: string },
) {
  await requireAdministrator(deps.db, ids.spaceId, actorId);
  const key = await requireKey(deps, ids.spaceId, ids.keyId);
  if (key.revoked_at !== null)
    throw new AppError('conflict', 'The key is revoked; its secret signs nothing.');
  const secret = randomSecret(SECRET_PREFIX);
  const until = overlapEnd(deps.clock.now());
  const rotation = { sealed: deps.secrets.seal(secret), until };
  if (!(await store.rotateKeyWebhookSecret(deps.db, ids, rotation))) {
    throw new AppError('conflict', 'The key is revoked; its secret signs nothing.');
  }
  return { id: ids.keyId, webhook_secret: secret, previous_secret_until: until.toISOString() };
}

/**
 * Reactivates a paused subscription: its failure clock starts afresh and the deliveries held
 * while it was paused become due at once. Resuming an active subscription changes nothing.
 */
export async function resumeSubscription(deps: WebhooksDeps, actorId: string, spaceId: string, id: string) {
  await requireAdministrator(deps.db, spaceId, actorId);
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (tx) => {
    const row = await store.findSubscription(tx, spaceId, id, true);
    if (!row) throw new AppError('not_found', 'No such subscription in this space.');
    if (row.status === 'active') return;
    await store.activateSubscription(tx, spaceId, id);
    await store.releaseHeldDeliveries(tx, id, now);
  });
  return present(await requireSubscription(deps, spaceId, id));
}

function presentDelivery(row: store.DeliveryRow) {
  return {
    id: row.id,
    event_id: row.event_id,
    event: row.event,
    status: row.status,
    attempt: row.attempts,
    attempts_max: row.attempts_max,
    response_code: row.last_status_code,
    error: row.last_error,
    created_at: row.created_at.toISOString(),
    last_attempt_at: row.last_attempt_at ? row.last_attempt_at.toISOString() : null,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
    delivered_at: row.delivered_at ? row.delivered_at.toISOString() : null,
  };
}

export type JournalPage = { limit?: string; starting_after?: string; status?: DeliveryStatus };
const JOURNAL_PAGE_MAX = 200;

/** The subscription's deliveries of the last 30 days, newest first, paged by delivery id. */
export async function listJournal(
  deps: WebhooksDeps,
  actorId: string,
  ids: { spaceId: string; subscriptionId: string },
  page: JournalPage,
) {
  await requireAdministrator(deps.db, ids.spaceId, actorId);
  await requireSubscription(deps, ids.spaceId, ids.subscriptionId);
  return journalPage(deps, { spaceId: ids.spaceId, subscriptionId: ids.subscriptionId }, page);
}

/** The key channel's journal: one key's webhook deliveries of the last 30 days, newest first. */
export async function listKeyJournal(
  deps: WebhooksDeps,
  actorId: string,
  ids: { spaceId: string; keyId: string },
  page: JournalPage,
) {
  await requireAdministrator(deps.db, ids.spaceId, actorId);
  await requireKey(deps, ids.spaceId, ids.keyId);
  return journalPage(deps, { spaceId: ids.spaceId, keyId: ids.keyId }, page);
}

async function requireKey(deps: WebhooksDeps, spaceId: string, keyId: string) {
  const key = await store.findKeyInSpace(deps.db, spaceId, keyId);
  if (!key) throw new AppError('not_found', 'No such key in this space.');
  return key;
}

async function journalPage(
  deps: WebhooksDeps,
  target: { spaceId: string; subscriptionId?: string; keyId?: string },
  page: JournalPage,
) {
  const limit = page.limit === undefined ? 50 : Number(page.limit);
  if (limit < 1 || limit > JOURNAL_PAGE_MAX) {
    throw new AppError('invalid_request', `limit must be from 1 to ${JOURNAL_PAGE_MAX}.`, { field: 'limit' });
  }
  let after: { createdAt: Date; id: string } | undefined;
  if (page.starting_after) {
    const cursor = await store.findDelivery(deps.db, target.spaceId, page.starting_after);
    const mine =
      cursor !== undefined &&
      (target.keyId === undefined
        ? cursor.subscription_id === target.subscriptionId
        : cursor.key_id === target.keyId);
    if (!mine) {
      throw new AppError('invalid_request', 'starting_after names no delivery of this journal.', {
        field: 'starting_after',
      });
    }
    after = { createdAt: cursor.created_at, id: cursor.id };
  }
  const rows = await store.listDeliveries(deps.db, {
    ...target,
    since: new Date(deps.clock.now().getTime() - JOURNAL_RETENTION_MS),
    limit: limit + 1,
    status: page.status,
    after,
  });
  return { items: rows.slice(0, limit).map(presentDelivery), has_more: rows.length > limit };
}

/**
 * Retry on a key channel row: one more attempt at once (a pending one is only moved forward).
 * A revoked key, or one with no webhook address any more, has nowhere to send: 409.
 */
export async function retryKeyDelivery(
  deps: WebhooksDeps,
  actorId: string,
  ids: { spaceId: string; keyId: string; deliveryId: string },
) {
  await requireAdministrator(deps.db, ids.spaceId, actorId);
  const key = await requireKey(deps, ids.spaceId, ids.keyId);
  if (key.revoked_at !== null || key.webhook_url === null) {
    throw new AppError(
      'conflict',
      'The key is revoked or has no webhook address; nothing can be sent to it.',
    );
  }
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (tx) => {
    const row = await store.findDelivery(tx, ids.spaceId, ids.deliveryId, true);
    if (!row || row.key_id !== ids.keyId) throw new AppError('not_found', 'No such delivery for this key.');
    await store.scheduleRetry(tx, row.id, {
      attemptsMax: retryBudget(row.status, row.attempts, row.attempts_max),
      at: now,
    });
  });
  return presentDelivery(
    defined(await store.findDelivery(deps.db, ids.spaceId, ids.deliveryId), 'the delivery just changed'),
  );
}

/** At most this many deliveries are replayed by one command. */
export const REPLAY_MAX = 1_000;

/**
 * `tollbook webhooks replay`: the deliveries of one event, or of every event since a time (both
 * channels, within the 30-day journal), are due again at once with one more attempt each. They
 * are sent again as the same deliveries, so the receiver sees the original event id. Held rows
 * (a paused subscription) stay held: resuming the subscription sends them. Answers the rows.
 */
export async function replayDeliveries(
  deps: { db: Db; clock: Clock },
  spaceId: string,
  select: { eventId?: string; since?: Date },
): Promise<store.DeliveryRow[]> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (tx) => {
    const rows = await store.deliveriesToReplay(tx, {
      spaceId,
      ...select,
      notBefore: new Date(now.getTime() - JOURNAL_RETENTION_MS),
      limit: REPLAY_MAX,
    });
    const replayed = rows.filter((row) => row.status !== 'held');
    for (const row of replayed) {
      await store.scheduleRetry(tx, row.id, {
        attemptsMax: retryBudget(row.status, row.attempts, row.attempts_max),
        at: now,
      });
    }
    return replayed;
  });
}

/**
 * A person's Retry: the delivery is due at once. A delivered or given-up delivery gets one more
 * attempt; a pending one keeps its schedule. A paused subscription must be resumed first.
 */
export async function retryDelivery(
  deps: WebhooksDeps,
  actorId: string,
  ids: { spaceId: string; subscriptionId: string; deliveryId: string },
) {
  await requireAdministrator(deps.db, ids.spaceId, actorId);
  const subscription = await requireSubscription(deps, ids.spaceId, ids.subscriptionId);
  if (subscription.status === 'paused') {
    throw new AppError(
      'conflict',
      'The subscription is paused; resume it, which retries its held deliveries.',
    );
  }
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (tx) => {
    const row = await store.findDelivery(tx, ids.spaceId, ids.deliveryId, true);
    if (!row || row.subscription_id !== ids.subscriptionId) {
      throw new AppError('not_found', 'No such delivery for this subscription.');
    }
    await store.scheduleRetry(tx, row.id, {
      attemptsMax: retryBudget(row.status, row.attempts, row.attempts_max),
      at: now,
    });
  });
  return presentDelivery(
    defined(await store.findDelivery(deps.db, ids.spaceId, ids.deliveryId), 'the delivery just changed'),
  );
}

export type WebhookTestInput = { url?: string; secret?: string; subscription_id?: string };

/** Sends one signed `webhook.test` event now and reports what the receiver answered. */
export async function sendTest(
  deps: WebhooksDeps,
  actorId: string,
  spaceId: string,
  input: WebhookTestInput,
) {
  await requireAdministrator(deps.db, spaceId, actorId);
  const target = await testTarget(deps, spaceId, input);
  const eventId = randomUUID();
  const at = deps.clock.now();
  const body = Buffer.from(bookBody(TEST_EVENT, at, { test: true }));
  const send = { event: TEST_EVENT, eventId, attempt: 1, body, secrets: target.secrets, at };
  const headers = webhookHeaders(send);
  const result = await deps.senders.subscription.post(target.url, body, headers);
  if (result.kind === 'refused') {
    throw new AppError('webhook_address_not_public', `The webhook address is refused: ${result.reason}`, {
      field: 'url',
    });
  }
  const { statusCode, error, delivered } = judgeResult(result);
  if (target.subscriptionId !== undefined) {
    // Listed in the subscription's journal. Recorded after the send, outside any transaction.
    const answer = answerOf(result);
    await store.insertTestSend(deps.db, {
      space_id: spaceId,
      id: eventId,
      subscription_id: target.subscriptionId,
      url: target.url,
      sent_at: at,
      delivered,
      status_code: statusCode,
      error,
      duration_ms: answer.durationMs ?? 0,
      response_excerpt: answer.responseExcerpt,
    });
  }
  return {
    event_id: eventId,
    url: target.url,
    delivered,
    response_code: statusCode,
    error,
    duration_ms: Math.round(result.durationMs),
    ...(target.generated ? { secret: target.secrets[0] } : {}),
  };
}

async function testTarget(deps: WebhooksDeps, spaceId: string, input: WebhookTestInput) {
  if (input.subscription_id !== undefined) {
    if (input.url !== undefined || input.secret !== undefined) {
      throw new AppError('invalid_request', 'Send either subscription_id or url (and secret), not both.');
    }
    const row = await requireSubscription(deps, spaceId, input.subscription_id);
    const secrets = openSigningSecrets(deps, row);
    if (secrets === null) {
      throw new AppError(
        'conflict',
        "The subscription's secret cannot be opened with this server's MASTER_KEY.",
      );
    }
    return { url: row.url, secrets, generated: false, subscriptionId: row.id };
  }
  if (input.url === undefined) {
    throw new AppError('invalid_request', 'Send url (and optionally secret) or subscription_id.', {
      field: 'url',
    });
  }
  const url = await checkSubscriptionUrl(deps, input.url);
  const secret = input.secret ?? randomSecret(SECRET_PREFIX);
  const secrets: [string] = [secret];
  return { url, secrets, generated: input.secret === undefined, subscriptionId: undefined };
}

/** How many test sends a journal lists (the newest). */
const TEST_SENDS_SHOWN = 20;

/** A subscription's test sends of the last 30 days, newest first. */
export async function listTestSends(
  deps: WebhooksDeps,
  actorId: string,
  ids: { spaceId: string; subscriptionId: string },
) {
  await requireAdministrator(deps.db, ids.spaceId, actorId);
  await requireSubscription(deps, ids.spaceId, ids.subscriptionId);
  const rows = await store.listTestSends(deps.db, {
    ...ids,
    since: new Date(deps.clock.now().getTime() - JOURNAL_RETENTION_MS),
    limit: TEST_SENDS_SHOWN,
  });
  return rows.map((row) => ({
    event_id: row.id,
    url: row.url,
    sent_at: row.sent_at.toISOString(),
    delivered: row.delivered,
    response_code: row.status_code,
    error: row.error,
    duration_ms: row.duration_ms,
    response_excerpt: row.response_excerpt,
  }));
}

/**
 * One delivery of a subscription: its journal row, the body it sends (pretty-printed; the bytes
 * on the wire are the compact form of the same JSON) and each recorded attempt.
 */
export async function getDelivery(
  deps: WebhooksDeps,
  actorId: string,
  ids: { spaceId: string; subscriptionId: string; deliveryId: string },
) {
  await requireAdministrator(deps.db, ids.spaceId, actorId);
  await requireSubscription(deps, ids.spaceId, ids.subscriptionId);
  const row = await store.findDelivery(deps.db, ids.spaceId, ids.deliveryId);
  if (!row || row.subscription_id !== ids.subscriptionId) {
    throw new AppError('not_found', 'No such delivery for this subscription.');
  }
  const event = defined(
    await store.findDeliveryEvent(deps.db, ids.spaceId, row.event_id),
    "a delivery's event (deleted with it)",
  );
  const body = deliveryBody({
    channel: event.channel,
    event: event.event,
    spaceId: ids.spaceId,
    occurredAt: event.occurred_at,
    payload: event.payload,
  });
  const attempts = await store.listAttempts(deps.db, ids.spaceId, row.id);
  return {
    ...presentDelivery(row),
    payload: JSON.stringify(JSON.parse(body), null, 2),
    attempts: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      attempted_at: attempt.attempted_at.toISOString(),
      response_code: attempt.status_code,
      error: attempt.error,
      duration_ms: attempt.duration_ms,
      response_excerpt: attempt.response_excerpt,
    })),
  };
}
