import { verifyWebhook, verifyWebhookRequest } from '@tollbook/client';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, ManualClock } from '../src/core/clock.ts';
import { createSenders, type Senders, verifyCommand, WebhookWorker } from '../src/features/webhooks/index.ts';
import { enqueueEvent } from '../src/platform/outbox/outbox.ts';
import { createHarness, type Harness, type User } from './harness.ts';
import { sampleMoneyIn, samplePaymentRequestPaid } from './sample-events.ts';
import { type Arrival, type Receiver, startReceiver } from './webhook-receiver.ts';

// Standard Webhooks beside the spec's headers, checked with the official `standardwebhooks`
// package, and secret rotation on both channels: the old secret alone, then both for 24 hours,
// then the new one alone, with the clock in the test's hand.

let h: Harness;
let clock: ManualClock;
let senders: Senders;
let target: Receiver;

beforeAll(async () => {
  clock = new ManualClock(new Date());
  h = await createHarness({ clock, env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
  senders = createSenders({ allowPrivate: true, resolver: h.deps.resolver });
  target = await startReceiver();
});
afterAll(async () => {
  await Promise.all([target.close(), senders.key.close(), senders.subscription.close()]);
  await h.close();
});

async function proSpace() {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner, { plan: 'pro' });
  return { owner, spaceId };
}

async function subscribe(owner: User, spaceId: string) {
  const res = await h.inject({
    method: 'POST',
    url: `/app/api/spaces/${spaceId}/subscriptions`,
    session: owner.token,
    payload: { url: target.url, events: [] },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; secret: string };
}

/** Enqueues an event, lets a worker deliver it and answers what the receiver got. */
async function deliver(spaceId: string, enqueue: () => Promise<string>): Promise<Arrival> {
  const eventId = await enqueue();
  await new WebhookWorker(
    { db: h.db, clock, secrets: h.deps.secrets, senders },
    { spaceIds: [spaceId] },
  ).drain();
  const arrival = target.arrivals.find((each) => each.eventId === eventId);
  expect(arrival, `no delivery of ${eventId}`).toBeDefined();
  return arrival!;
}

const moneyIn = (spaceId: string) => () => enqueueEvent(h.db, sampleMoneyIn({ spaceId, at: clock.now() }));

function standardHeadersOf(arrival: Arrival) {
  return {
    'webhook-id': String(arrival.headers['webhook-id']),
    'webhook-timestamp': String(arrival.headers['webhook-timestamp']),
    'webhook-signature': String(arrival.headers['webhook-signature']),
  };
}

/** Which of the secrets the delivery's Standard Webhooks signatures verify under, at the test's time. */
function acceptedBy(arrival: Arrival, secrets: Record<string, string>): string[] {
  return Object.entries(secrets)
    .filter(([, secret]) => {
      try {
        verifyWebhookRequest(arrival.body, standardHeadersOf(arrival), secret, { now: clock.now() });
        return true;
      } catch {
        return false;
      }
    })
    .map(([name]) => name);
}

describe('Standard Webhooks headers', () => {
  it('a book delivery verifies with the standardwebhooks package, beside a valid X-Service-Signature', async () => {
    const { owner, spaceId } = await proSpace();
    const sub = await subscribe(owner, spaceId);
    const arrival = await deliver(spaceId, moneyIn(spaceId));
    expect(arrival.headers['webhook-id']).toBe(arrival.eventId);
    expect(Number(arrival.headers['webhook-timestamp'])).toBe(Math.floor(clock.now().getTime() / 1000));
    expect(arrival.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const payload = new Webhook(sub.secret).verify(arrival.body, standardHeadersOf(arrival)) as {
      event: string;
    };
    expect(payload.event).toBe('money.in');
    expect(verifyWebhook(arrival.body, arrival.headers['x-service-signature'], sub.secret).event).toBe(
      'money.in',
    );
    const tampered = Buffer.concat([arrival.body, Buffer.from(' ')]);
    expect(() => new Webhook(sub.secret).verify(tampered, standardHeadersOf(arrival))).toThrow(
      'No matching signature found',
    );
  });

  it('a key-channel delivery carries them too, under the key’s webhook secret', async () => {
    const { spaceId, key } = await h.world({ webhook_url: target.url });
    const arrival = await deliver(spaceId, () =>
      enqueueEvent(h.db, samplePaymentRequestPaid({ spaceId, keyId: key.id, at: clock.now() })),
    );
    const payload = new Webhook(key.webhookSecret).verify(arrival.body, standardHeadersOf(arrival)) as {
      event: string;
      space_id: string;
    };
    expect(payload).toMatchObject({ event: 'payment_request.paid', space_id: spaceId });
  });
});

describe('POST …/subscriptions/{id}/rotate-secret over the 24-hour overlap', () => {
  it('signs under the old secret only, then both for 24 hours, then the new one only', async () => {
    const { owner, spaceId } = await proSpace();
    const sub = await subscribe(owner, spaceId);
    const before = await deliver(spaceId, moneyIn(spaceId));
    expect(acceptedBy(before, { old: sub.secret })).toEqual(['old']);

    const res = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/subscriptions/${sub.id}/rotate-secret`,
      session: owner.token,
    });
    expect(res.statusCode, res.body).toBe(200);
    const rotated = res.json() as { secret: string; previous_secret_until: string };
    expect(new Date(rotated.previous_secret_until).getTime()).toBe(clock.now().getTime() + DAY_MS);
    const secrets = { old: sub.secret, new: rotated.secret };

    const both = await deliver(spaceId, moneyIn(spaceId));
    expect(String(both.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(acceptedBy(both, secrets)).toEqual(['old', 'new']);
    // The official verifier accepts the delivery under either secret during the overlap.
    expect(new Webhook(sub.secret).verify(both.body, standardHeadersOf(both))).toMatchObject({
      event: 'money.in',
    });
    expect(new Webhook(rotated.secret).verify(both.body, standardHeadersOf(both))).toMatchObject({
      event: 'money.in',
    });
    // The spec's single signature moves to the new secret at once; the client accepts either.
    expect(() => verifyWebhook(both.body, both.headers['x-service-signature'], sub.secret)).toThrow();
    expect(
      verifyWebhook(both.body, both.headers['x-service-signature'], [sub.secret, rotated.secret]).event,
    ).toBe('money.in');

    clock.advance(DAY_MS - 1);
    const last = await deliver(spaceId, moneyIn(spaceId));
    expect(acceptedBy(last, secrets)).toEqual(['old', 'new']);

    clock.advance(1);
    const after = await deliver(spaceId, moneyIn(spaceId));
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(acceptedBy(after, secrets)).toEqual(['new']);
  });

  it('a retry of an event from before the rotation is signed under both secrets', async () => {
    const failing = await startReceiver({ statusFor: (_arrival, nth) => (nth === 1 ? 500 : 200) });
    try {
      const { owner, spaceId } = await proSpace();
      const res = await h.inject({
        method: 'POST',
        url: `/app/api/spaces/${spaceId}/subscriptions`,
        session: owner.token,
        payload: { url: failing.url, events: [] },
      });
      const sub = res.json() as { id: string; secret: string };
      const eventId = await moneyIn(spaceId)();
      const worker = new WebhookWorker(
        { db: h.db, clock, secrets: h.deps.secrets, senders },
        { spaceIds: [spaceId] },
      );
      await worker.drain();
      expect(failing.countFor(eventId)).toBe(1);
      const rotate = await h.inject({
        method: 'POST',
        url: `/app/api/spaces/${spaceId}/subscriptions/${sub.id}/rotate-secret`,
        session: owner.token,
      });
      const fresh = rotate.json().secret as string;
      clock.advance(60_000);
      await worker.drain();
      const retried = failing.arrivals.filter((each) => each.eventId === eventId)[1]!;
      expect(retried.attempt).toBe(2);
      expect(acceptedBy(retried, { old: sub.secret, new: fresh })).toEqual(['old', 'new']);
    } finally {
      await failing.close();
    }
  });

  it('answers 404 for another space’s subscription and 403 for a viewer', async () => {
    const { owner, spaceId } = await proSpace();
    const sub = await subscribe(owner, spaceId);
    const other = await proSpace();
    const foreign = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${other.spaceId}/subscriptions/${sub.id}/rotate-secret`,
      session: other.owner.token,
    });
    expect(foreign.statusCode).toBe(404);
    const viewer = await h.signup('Viewer');
    await h.addMember(owner, spaceId, viewer, 'viewer');
    const refused = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/subscriptions/${sub.id}/rotate-secret`,
      session: viewer.token,
    });
    expect(refused.statusCode).toBe(403);
  });
});

describe('POST …/keys/{key_id}/rotate-webhook-secret', () => {
  const rotateUrl = (spaceId: string, keyId: string) =>
    `/app/api/spaces/${spaceId}/keys/${keyId}/rotate-webhook-secret`;
  const keyEvent = (spaceId: string, keyId: string) => () =>
    enqueueEvent(h.db, samplePaymentRequestPaid({ spaceId, keyId, at: clock.now() }));

  it('shows the new secret once and signs key deliveries under both for 24 hours, then the new one', async () => {
    const { owner, spaceId, key } = await h.world({ webhook_url: target.url });
    const res = await h.inject({ method: 'POST', url: rotateUrl(spaceId, key.id), session: owner.token });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const rotated = res.json() as { id: string; webhook_secret: string; previous_secret_until: string };
    expect(rotated.id).toBe(key.id);
    expect(rotated.webhook_secret).toMatch(/^whsec_/);
    const secrets = { old: key.webhookSecret, new: rotated.webhook_secret };
    const both = await deliver(spaceId, keyEvent(spaceId, key.id));
    expect(acceptedBy(both, secrets)).toEqual(['old', 'new']);
    expect(verifyWebhook(both.body, both.headers['x-service-signature'], rotated.webhook_secret).event).toBe(
      'payment_request.paid',
    );
    clock.advance(DAY_MS);
    const after = await deliver(spaceId, keyEvent(spaceId, key.id));
    expect(acceptedBy(after, secrets)).toEqual(['new']);
  });

  it('refuses a revoked key with 409, another space’s key with 404 and a member with 403', async () => {
    const { owner, spaceId, key } = await h.world({ webhook_url: target.url });
    const other = await h.world();
    const foreign = await h.inject({
      method: 'POST',
      url: rotateUrl(other.spaceId, key.id),
      session: other.owner.token,
    });
    expect(foreign.statusCode).toBe(404);
    const member = await h.signup('Member');
    await h.addMember(owner, spaceId, member, 'member');
    const refused = await h.inject({
      method: 'POST',
      url: rotateUrl(spaceId, key.id),
      session: member.token,
    });
    expect(refused.statusCode).toBe(403);
    const anonymous = await h.inject({ method: 'POST', url: rotateUrl(spaceId, key.id) });
    expect(anonymous.statusCode).toBe(401);
    const revoke = await h.inject({
      method: 'DELETE',
      url: `/app/api/spaces/${spaceId}/keys/${key.id}`,
      session: owner.token,
    });
    expect(revoke.statusCode).toBe(200);
    const revoked = await h.inject({ method: 'POST', url: rotateUrl(spaceId, key.id), session: owner.token });
    expect(revoked.statusCode).toBe(409);
    expect(revoked.json().error).toBe('conflict');
  });
});

describe('tollbook webhooks verify and the client with two secrets', () => {
  it('accepts either secret for both signature kinds, and refuses a third', async () => {
    const { owner, spaceId } = await proSpace();
    const sub = await subscribe(owner, spaceId);
    const rotate = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/subscriptions/${sub.id}/rotate-secret`,
      session: owner.token,
    });
    const fresh = rotate.json().secret as string;
    const arrival = await deliver(spaceId, moneyIn(spaceId));
    const lines: string[] = [];
    const out = { write: (text: string) => lines.push(text) };
    const standard = {
      id: String(arrival.headers['webhook-id']),
      timestamp: String(arrival.headers['webhook-timestamp']),
    };
    const signature = String(arrival.headers['webhook-signature']);
    expect(verifyCommand(sub.secret, signature, arrival.body, out, standard)).toBe(0);
    expect(verifyCommand(fresh, signature, arrival.body, out, standard)).toBe(0);
    expect(verifyCommand('whsec_other', signature, arrival.body, out, standard)).toBe(1);
    expect(verifyCommand(sub.secret, signature, arrival.body, out)).toBe(1);
    expect(lines.at(-1)).toContain('--webhook-id');
    const service = String(arrival.headers['x-service-signature']);
    expect(verifyCommand(`${sub.secret},${fresh}`, service, arrival.body, out)).toBe(0);
    expect(lines.at(-1)).toBe(`valid (${arrival.body.length} bytes; secret 2 of 2)\n`);
    expect(verifyCommand(sub.secret, service, arrival.body, out)).toBe(1);

    const headers = arrival.headers as Record<string, string>;
    const now = { now: clock.now() };
    expect(verifyWebhookRequest(arrival.body, headers, [sub.secret], now).event).toBe('money.in');
    expect(verifyWebhookRequest(arrival.body, headers, fresh, now).event).toBe('money.in');
    expect(() => verifyWebhookRequest(arrival.body, headers, 'whsec_other', now)).toThrow(
      'No webhook-signature',
    );
    const late = { now: new Date(clock.now().getTime() + 301_000) };
    expect(() => verifyWebhookRequest(arrival.body, headers, fresh, late)).toThrow('tolerance');
  });
});
