import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import { BOOK_CHANNEL_EVENTS, type BookChannelEvent } from '../src/core/events.ts';
import { asAmount } from '../src/core/money.ts';
import { fanOut } from '../src/features/webhooks/delivery-service.ts';
import {
  createSenders,
  type Senders,
  WebhookWorker,
  type WorkerOptions,
} from '../src/features/webhooks/index.ts';
import { enqueueEvent, eventGroup, insertEventGroup } from '../src/platform/outbox/outbox.ts';
import { createHarness, type Harness, type User } from './harness.ts';
import {
  sampleBookEvent,
  sampleMoneyIn,
  sampleMoneyOut,
  sampleMoveFields,
  samplePaymentRequestPaid,
} from './sample-events.ts';
import { type Receiver, type ReceiverOptions, startReceiver } from './webhook-receiver.ts';

// Delivery of both channels against a real HTTP receiver on loopback (the development switch
// admits it), with the clock in the test's hand so every schedule is checked to the millisecond.

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

let h: Harness;
let clock: ManualClock;
let senders: Senders;
const receivers: Receiver[] = [];

beforeAll(async () => {
  clock = new ManualClock(new Date());
  h = await createHarness({ clock, env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
  senders = createSenders({ allowPrivate: true, resolver: h.deps.resolver, timeoutMs: 2_000 });
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await Promise.all([senders.key.close(), senders.subscription.close()]);
  await h.close();
});

async function receiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const started = await startReceiver(options);
  receivers.push(started);
  return started;
}

function workerFor(spaceId: string, options: WorkerOptions = {}, workerSenders = senders) {
  return new WebhookWorker(
    { db: h.db, clock, secrets: h.deps.secrets, senders: workerSenders },
    { spaceIds: [spaceId], ...options },
  );
}

/** An independent check of X-Service-Signature: HMAC-SHA256 over the exact bytes received. */
function signatureMatches(secret: string, body: Buffer, header: string | string[] | undefined): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const given = Buffer.from(String(header));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function keyEvent(spaceId: string, keyId: string, extra: { memo?: string } = {}) {
  return enqueueEvent(h.db, samplePaymentRequestPaid({ spaceId, keyId, at: clock.now() }, extra));
}

function bookEvent(spaceId: string, event: BookChannelEvent) {
  return enqueueEvent(h.db, sampleBookEvent({ spaceId, at: clock.now() }, event));
}

async function subscribe(owner: User, spaceId: string, url: string, events: string[] = []) {
  const res = await h.inject({
    method: 'POST',
    url: `/app/api/spaces/${spaceId}/subscriptions`,
    session: owner.token,
    payload: { url, events },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; secret: string };
}

function delivery(eventId: string) {
  return h.db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('event_id', '=', eventId)
    .executeTakeFirstOrThrow();
}

/** Runs rounds at successive instants and returns the attempt numbers the receiver saw at each. */
async function attemptsAt(worker: WebhookWorker, target: Receiver, offsetsMs: number[]) {
  const seen: number[][] = [];
  let at = 0;
  for (const offset of offsetsMs) {
    clock.advance(offset - at);
    at = offset;
    const before = target.arrivals.length;
    await worker.runOnce();
    seen.push(target.arrivals.slice(before).map((arrival) => arrival.attempt));
  }
  return seen;
}

describe('key channel (§6.1)', () => {
  it('posts {event, space_id, at, data} with the headers and a signature over the raw bytes', async () => {
    const target = await receiver();
    const { spaceId, key } = await h.world({ webhook_url: target.url });
    const eventId = await keyEvent(spaceId, key.id, { memo: 'naïve ☕' });
    const at = clock.now().toISOString();
    await workerFor(spaceId).runOnce();
    expect(target.arrivals).toHaveLength(1);
    const [arrival] = target.arrivals;
    expect(arrival!.path).toBe('/hook');
    expect(JSON.parse(arrival!.body.toString('utf8'))).toEqual({
      event: 'payment_request.paid',
      space_id: spaceId,
      at,
      data: {
        ...samplePaymentRequestPaid({ spaceId, keyId: key.id, at: clock.now() }).data,
        memo: 'naïve ☕',
      },
    });
    expect(Object.keys(JSON.parse(arrival!.body.toString('utf8')))).not.toContain('version');
    expect(arrival!.headers['content-type']).toBe('application/json');
    expect(arrival!.headers['x-service-event']).toBe('payment_request.paid');
    expect(arrival!.headers['x-service-event-id']).toBe(eventId);
    expect(arrival!.headers['x-service-delivery-attempt']).toBe('1');
    expect(signatureMatches(key.webhookSecret, arrival!.body, arrival!.headers['x-service-signature'])).toBe(
      true,
    );
    // One flipped byte no longer verifies: the signature covers the bytes, not a re-serialisation.
    const tampered = Buffer.from(arrival!.body);
    tampered[tampered.length - 2] = tampered.at(-2)! ^ 1;
    expect(signatureMatches(key.webhookSecret, tampered, arrival!.headers['x-service-signature'])).toBe(
      false,
    );
    expect(await delivery(eventId)).toMatchObject({
      status: 'delivered',
      attempts: 1,
      last_status_code: 200,
    });
  });

  it('attempts at once, then 5 s and 30 s after each failure, and gives up after the third', async () => {
    const target = await receiver({ statusFor: () => 500 });
    const { spaceId, key } = await h.world({ webhook_url: target.url });
    const eventId = await keyEvent(spaceId, key.id);
    const worker = workerFor(spaceId);
    const seen = await attemptsAt(worker, target, [0, 4_999, 5_000, 34_999, 35_000, 3_600_000]);
    expect(seen).toEqual([[1], [], [2], [], [3], []]);
    expect(new Set(target.arrivals.map((arrival) => arrival.eventId))).toEqual(new Set([eventId]));
    expect(await delivery(eventId)).toMatchObject({
      status: 'given_up',
      attempts: 3,
      last_status_code: 500,
      last_error: 'HTTP 500: not a 2xx answer.',
    });
  });

  it('delivers on the third attempt to a receiver that fails the first two, with the same event id', async () => {
    const target = await receiver({ statusFor: (_arrival, nth) => (nth <= 2 ? 503 : 204) });
    const { spaceId, key } = await h.world({ webhook_url: target.url });
    const eventId = await keyEvent(spaceId, key.id);
    const seen = await attemptsAt(workerFor(spaceId), target, [0, 5_000, 35_000]);
    expect(seen).toEqual([[1], [2], [3]]);
    expect(target.arrivals.map((arrival) => arrival.eventId)).toEqual([eventId, eventId, eventId]);
    const bodies = target.arrivals.map((arrival) => arrival.body.toString('utf8'));
    expect(new Set(bodies).size).toBe(1);
    expect(await delivery(eventId)).toMatchObject({
      status: 'delivered',
      attempts: 3,
      last_status_code: 204,
    });
  });

  it('creates no delivery for a key without a webhook address or a revoked key', async () => {
    const target = await receiver();
    const { owner, spaceId, key } = await h.world({ webhook_url: target.url });
    const silent = await h.issueKey(owner, spaceId);
    await h.inject({
      method: 'DELETE',
      url: `/app/api/spaces/${spaceId}/keys/${key.id}`,
      session: owner.token,
    });
    const revokedEvent = await keyEvent(spaceId, key.id);
    const silentEvent = await keyEvent(spaceId, silent.id);
    const done = await workerFor(spaceId).drain();
    expect(done).toEqual({ events: 2, attempted: 0 });
    expect(target.arrivals).toHaveLength(0);
    const rows = await h.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('event_id', 'in', [revokedEvent, silentEvent])
      .execute();
    expect(rows).toEqual([]);
  });

  it('counts a redirect as a failure and never fetches its Location', async () => {
    const elsewhere = await receiver();
    const target = await receiver({ statusFor: () => 302, headersFor: () => ({ location: elsewhere.url }) });
    const { spaceId, key } = await h.world({ webhook_url: target.url });
    const eventId = await keyEvent(spaceId, key.id);
    await workerFor(spaceId).runOnce();
    expect(target.arrivals).toHaveLength(1);
    expect(elsewhere.arrivals).toHaveLength(0);
    expect(await delivery(eventId)).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_status_code: 302,
      last_error: 'HTTP 302: a redirect, which is not followed.',
    });
  });

  it('counts a receiver that does not answer in time as a failure', async () => {
    const target = await receiver({ hang: true });
    const quick = createSenders({ allowPrivate: true, resolver: h.deps.resolver, timeoutMs: 300 });
    try {
      const { spaceId, key } = await h.world({ webhook_url: target.url });
      const eventId = await keyEvent(spaceId, key.id);
      await workerFor(spaceId, {}, quick).runOnce();
      expect(await delivery(eventId)).toMatchObject({
        status: 'pending',
        attempts: 1,
        last_status_code: null,
        last_error: 'no answer within 0.3 s',
      });
    } finally {
      await Promise.all([quick.key.close(), quick.subscription.close()]);
    }
  });

  it('reaches a named host only at the address the resolver gave, and sends Host as the name', async () => {
    const target = await receiver();
    // "localhost" resolves (in the test resolver) to 127.0.0.1; the socket connects there.
    const { spaceId, key } = await h.world({ webhook_url: `http://localhost:${target.port}/named` });
    await keyEvent(spaceId, key.id);
    await workerFor(spaceId).runOnce();
    expect(target.arrivals).toHaveLength(1);
    expect(target.arrivals[0]!.headers.host).toBe(`localhost:${target.port}`);
  });
});

describe('book channel (§6.2)', () => {
  it('posts {event, version: 1, at, ...fields} signed with the subscription secret', async () => {
    const target = await receiver();
    const { owner, spaceId } = await h.world();
    const subscription = await subscribe(owner, spaceId, target.url);
    // Fields named like the envelope's never override it.
    const event = sampleMoneyIn({ spaceId, at: clock.now() });
    const spoofed = { ...event.fields, event: 'spoof', version: 7 };
    const eventId = await enqueueEvent(h.db, { ...event, fields: spoofed });
    const at = clock.now().toISOString();
    await workerFor(spaceId).runOnce();
    expect(target.arrivals).toHaveLength(1);
    const [arrival] = target.arrivals;
    const body = JSON.parse(arrival!.body.toString('utf8'));
    expect(body).toEqual({
      event: 'money.in',
      version: 1,
      at,
      ...sampleMoveFields('in'),
    });
    expect(Object.keys(body).slice(0, 3)).toEqual(['event', 'version', 'at']);
    expect(arrival!.headers['x-service-event-id']).toBe(eventId);
    expect(arrival!.headers['x-service-delivery-attempt']).toBe('1');
    expect(
      signatureMatches(subscription.secret, arrival!.body, arrival!.headers['x-service-signature']),
    ).toBe(true);
  });

  it('delivers every event of a group (a pushed batch writes one) once each, signed, in its own delivery', async () => {
    const target = await receiver();
    const { owner, spaceId } = await h.world();
    const subscription = await subscribe(owner, spaceId, target.url);
    const at = clock.now();
    const move = (n: bigint) => ({
      transaction_id: `0b7a3f7e-8a3c-4a49-9a51-9f1c2f0d7c1${n}`,
      amount: asAmount(n * 100_000_000n),
    });
    await insertEventGroup(
      h.db,
      eventGroup([
        sampleMoneyIn({ spaceId, at }, move(1n)),
        sampleMoneyOut({ spaceId, at }, move(2n)),
        sampleMoneyIn({ spaceId, at }, move(3n)),
      ]),
    );
    await workerFor(spaceId).drain();
    expect(target.arrivals).toHaveLength(3);
    const bodies = target.arrivals.map((arrival) => JSON.parse(arrival.body.toString('utf8')));
    expect(bodies.map((body) => body.amount).sort()).toEqual(['1.00000000', '2.00000000', '3.00000000']);
    expect(bodies.find((body) => body.amount === '2.00000000')).toEqual({
      event: 'money.out',
      version: 1,
      at: at.toISOString(),
      ...sampleMoveFields('out', move(2n)),
    });
    const eventIds = new Set(target.arrivals.map((arrival) => arrival.headers['x-service-event-id']));
    expect(eventIds.size).toBe(3);
    for (const arrival of target.arrivals) {
      expect(
        signatureMatches(subscription.secret, arrival.body, arrival.headers['x-service-signature']),
      ).toBe(true);
    }
    // The group became its events once: nothing is left to expand, and another round sends nothing.
    const groups = await h.db
      .selectFrom('outbox_event_groups')
      .select('id')
      .where('space_id', '=', spaceId)
      .execute();
    expect(groups).toHaveLength(0);
    await workerFor(spaceId).drain();
    expect(target.arrivals).toHaveLength(3);
  });

  it('sends each subscription only its events; an empty list takes every event, the unproduced ones too', async () => {
    const all = await receiver();
    const outOnly = await receiver();
    const { owner, spaceId } = await h.world();
    await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${spaceId}`,
      session: owner.token,
      payload: { plan: 'scale' },
    });
    await subscribe(owner, spaceId, all.url, []);
    await subscribe(owner, spaceId, outOnly.url, ['money.out']);
    const events = BOOK_CHANNEL_EVENTS;
    for (const event of events) await bookEvent(spaceId, event);
    await workerFor(spaceId).drain();
    expect(all.arrivals.map((arrival) => arrival.headers['x-service-event']).sort()).toEqual(
      [...events].sort(),
    );
    expect(outOnly.arrivals.map((arrival) => arrival.headers['x-service-event'])).toEqual(['money.out']);
  });

  it('retries after 1, 5, 15 min, 1, 3, 6, 12 h and gives up after the eighth failure', async () => {
    const target = await receiver({ statusFor: () => 500 });
    const { owner, spaceId } = await h.world();
    await subscribe(owner, spaceId, target.url);
    const eventId = await bookEvent(spaceId, 'money.out');
    const gaps = [MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR];
    const offsets = [0];
    const expected: number[][] = [[1]];
    for (const [index, gap] of gaps.entries()) {
      const previous = offsets.at(-1)!;
      offsets.push(previous + gap - 1, previous + gap);
      expected.push([], [index + 2]);
    }
    offsets.push(offsets.at(-1)! + 12 * HOUR);
    expected.push([]);
    expect(await attemptsAt(workerFor(spaceId), target, offsets)).toEqual(expected);
    expect(await delivery(eventId)).toMatchObject({ status: 'given_up', attempts: 8, last_status_code: 500 });
  });

  it('pauses a subscription after a day of nothing but failures, tells the owners, and resumes', async () => {
    let failing = true;
    const target = await receiver({ statusFor: () => (failing ? 500 : 200) });
    const { owner, spaceId } = await h.world();
    const subscription = await subscribe(owner, spaceId, target.url);
    const worker = workerFor(spaceId);
    const first = await bookEvent(spaceId, 'money.in');
    await worker.runOnce();
    // Failures every few hours, each from a new event, for just under a day: still active.
    for (let hour = 4; hour < 24; hour += 4) {
      clock.advance(4 * HOUR);
      await bookEvent(spaceId, 'money.in');
      await worker.drain();
    }
    const status = async () =>
      await h.db
        .selectFrom('webhook_subscriptions')
        .select(['status', 'paused_at'])
        .where('id', '=', subscription.id)
        .executeTakeFirstOrThrow();
    expect((await status()).status).toBe('active');
    clock.advance(4 * HOUR);
    const late = await bookEvent(spaceId, 'money.in');
    await worker.drain();
    expect(await status()).toMatchObject({ status: 'paused', paused_at: clock.now() });
    const notes = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${spaceId}/notifications`,
      session: owner.token,
    });
    const paused = notes
      .json()
      .items.filter((note: { kind: string }) => note.kind === 'webhook_subscription_paused');
    expect(paused).toHaveLength(1);
    expect(paused[0].payload).toMatchObject({ subscription_id: subscription.id, url: target.url });
    // While paused nothing is attempted, and new events are not queued for it.
    const arrivalsAtPause = target.arrivals.length;
    await bookEvent(spaceId, 'money.out');
    clock.advance(HOUR);
    await worker.drain();
    expect(target.arrivals.length).toBe(arrivalsAtPause);
    // The first event's schedule (stepped coarsely here) was not finished: it is held too.
    expect((await delivery(late)).status).toBe('held');
    expect(await delivery(first)).toMatchObject({ status: 'held', attempts: 6 });
    // Resume: held deliveries are due at once and go through.
    failing = false;
    const resumed = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/subscriptions/${subscription.id}/resume`,
      session: owner.token,
    });
    expect(resumed.statusCode, resumed.body).toBe(200);
    expect(resumed.json()).toMatchObject({ status: 'active', paused_at: null });
    await worker.drain();
    expect((await delivery(late)).status).toBe('delivered');
    expect(await delivery(first)).toMatchObject({ status: 'delivered', attempts: 7 });
  });
});

describe('workers', () => {
  it('lets two workers on one database deliver every event once, never one twice at a time', async () => {
    const target = await receiver({ delayMs: 5 });
    const { owner, spaceId, key } = await h.world({ webhook_url: (await receiver()).url });
    await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${spaceId}`,
      session: owner.token,
      payload: { plan: 'scale' },
    });
    await h.db
      .updateTable('integration_keys')
      .set({ webhook_url: target.url })
      .where('id', '=', key.id)
      .execute();
    await subscribe(owner, spaceId, target.url);
    const ids: string[] = [];
    for (let index = 0; index < 60; index += 1) {
      ids.push(await keyEvent(spaceId, key.id));
      ids.push(await bookEvent(spaceId, 'money.in'));
    }
    const workers = [workerFor(spaceId, { batchSize: 7 }), workerFor(spaceId, { batchSize: 7 })];
    await Promise.all(workers.map((worker) => worker.drain(200)));
    expect(target.arrivals).toHaveLength(120);
    expect(new Set(target.arrivals.map((arrival) => arrival.eventId))).toEqual(new Set(ids));
    expect(target.overlapMax()).toBe(1);
  });

  it('runs continuously with start() and stops cleanly', async () => {
    const target = await receiver();
    const { spaceId, key } = await h.world({ webhook_url: target.url });
    const worker = workerFor(spaceId, { idleMs: 10 });
    worker.start();
    try {
      const ids = await Promise.all([1, 2, 3].map(() => keyEvent(spaceId, key.id)));
      const deadline = Date.now() + 10_000;
      while (target.arrivals.length < 3 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(target.arrivals.map((arrival) => arrival.eventId).sort()).toEqual([...ids].sort());
    } finally {
      await worker.stop();
    }
  });

  it('re-attempts a delivery whose worker died holding it, once its lease lapses', async () => {
    const target = await receiver();
    const { spaceId, key } = await h.world({ webhook_url: target.url });
    const eventId = await keyEvent(spaceId, key.id);
    // A worker claims (fans out) and dies before sending: the delivery is leased, not lost.
    const fanned = await fanOut(
      { db: h.db, clock, secrets: h.deps.secrets, senders },
      { limit: 10, leaseMs: 60_000, spaceIds: [spaceId] },
    );
    expect(fanned.sendables).toHaveLength(1);
    const worker = workerFor(spaceId);
    clock.advance(59_999);
    await worker.runOnce();
    expect(target.arrivals).toHaveLength(0);
    clock.advance(1);
    await worker.runOnce();
    expect(target.arrivals.map((arrival) => arrival.eventId)).toEqual([eventId]);
    expect(await delivery(eventId)).toMatchObject({ status: 'delivered', attempts: 1 });
  });
});
