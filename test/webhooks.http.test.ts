import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, ManualClock } from '../src/core/clock.ts';
import { createSenders, type Senders, WebhookWorker } from '../src/features/webhooks/index.ts';
import { enqueueEvent } from '../src/platform/outbox/outbox.ts';
import { createHarness, type Harness, type User } from './harness.ts';
import { sampleMoneyIn } from './sample-events.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

// The app API of book subscriptions (DECISIONS "App API"): every route's success, validation
// edges and authorisation (no session 401, not a member 404, member or viewer 403).

let h: Harness;
let strict: Harness;
let clock: ManualClock;
let senders: Senders;
let target: Receiver;
let failing: Receiver;

beforeAll(async () => {
  clock = new ManualClock(new Date());
  h = await createHarness({ clock, env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
  strict = await createHarness();
  senders = createSenders({ allowPrivate: true, resolver: h.deps.resolver });
  target = await startReceiver();
  failing = await startReceiver({ statusFor: () => 500 });
});
afterAll(async () => {
  await Promise.all([target.close(), failing.close(), senders.key.close(), senders.subscription.close()]);
  await Promise.all([h.close(), strict.close()]);
});

const base = (spaceId: string) => `/app/api/spaces/${spaceId}/subscriptions`;

async function space(plan = 'pro') {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner, { plan });
  return { owner, spaceId };
}

async function create(owner: User, spaceId: string, payload: unknown, harness = h) {
  return harness.inject({
    method: 'POST',
    url: base(spaceId),
    session: owner.token,
    payload: payload as object,
  });
}

async function subscription(owner: User, spaceId: string, url = target.url, events: string[] = []) {
  const res = await create(owner, spaceId, { url, events });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; secret: string };
}

function worker(spaceId: string) {
  return new WebhookWorker({ db: h.db, clock, secrets: h.deps.secrets, senders }, { spaceIds: [spaceId] });
}

function moneyIn(spaceId: string) {
  return enqueueEvent(h.db, sampleMoneyIn({ spaceId, at: clock.now() }));
}

describe('POST /app/api/spaces/{id}/subscriptions', () => {
  it('creates a subscription and shows its secret once, kept only sealed', async () => {
    const { owner, spaceId } = await space();
    const res = await create(owner, spaceId, { url: target.url, events: ['money.in', 'money.out'] });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body).toMatchObject({
      url: target.url,
      events: ['money.in', 'money.out'],
      status: 'active',
      paused_at: null,
    });
    expect(body.secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
    expect(new Date(body.created_at).toISOString()).toBe(body.created_at);
    const row = await h.db
      .selectFrom('webhook_subscriptions')
      .select('secret_sealed')
      .where('id', '=', body.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_sealed).not.toContain(body.secret);
    expect(h.deps.secrets.open(row.secret_sealed)).toBe(body.secret);
    const list = await h.inject({ method: 'GET', url: base(spaceId), session: owner.token });
    expect(list.json().items).toEqual(
      [{ ...body, secret: undefined }].map(({ secret: _s, ...rest }) => rest),
    );
  });

  it('refuses malformed bodies with 422 in the validation shape', async () => {
    const { owner, spaceId } = await space();
    const cases: [unknown, string][] = [
      [{ events: [] }, 'url'],
      [{ url: target.url }, 'events'],
      [{ url: target.url, events: ['money.sideways'] }, 'events'],
      [{ url: target.url, events: ['money.in', 'money.in'] }, 'events'],
      [{ url: target.url, events: 'money.in' }, 'events'],
      [{ url: '', events: [] }, 'url'],
      [{ url: `https://hooks.example.com/${'a'.repeat(2001)}`, events: [] }, 'url'],
    ];
    for (const [payload, field] of cases) {
      const res = await create(owner, spaceId, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(422);
      expect(res.json().detail.map((item: { loc: string[] }) => item.loc[1])).toContain(field);
    }
  });

  it('names WEBHOOK_ALLOW_PRIVATE=1 when refusing a loopback receiver in development, never for a blocked one', async () => {
    const owner = await strict.signup('Owner');
    const spaceId = await strict.createSpace(owner, { plan: 'scale' });
    const loopback = await create(owner, spaceId, { url: 'http://127.0.0.1:9/hook', events: [] }, strict);
    expect(loopback.statusCode).toBe(422);
    expect(loopback.json().detail).toContain('WEBHOOK_ALLOW_PRIVATE=1');
    const metadata = await create(owner, spaceId, { url: 'https://169.254.169.254/', events: [] }, strict);
    expect(metadata.statusCode).toBe(422);
    expect(metadata.json().detail).not.toContain('WEBHOOK_ALLOW_PRIVATE');
    const key = await strict.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/keys`,
      session: owner.token,
      payload: { name: 'k', scopes: ['payments'], webhook_url: 'http://127.0.0.1:9/hook' },
    });
    expect(key.statusCode).toBe(422);
    expect(key.json().detail).toContain('WEBHOOK_ALLOW_PRIVATE=1');
  });

  it('takes only public https on port 443 without the development switch', async () => {
    const owner = await strict.signup('Owner');
    const spaceId = await strict.createSpace(owner, { plan: 'scale' });
    for (const url of [
      target.url,
      'http://hooks.example.com/x',
      'https://hooks.example.com:8443/x',
      'https://internal.example.com/x',
      'https://169.254.169.254/',
      'not a url',
    ]) {
      const res = await create(owner, spaceId, { url, events: [] }, strict);
      expect(res.statusCode, url).toBe(422);
      expect(res.json()).toMatchObject({ error: 'webhook_address_not_public', details: { field: 'url' } });
    }
    const ok = await create(
      owner,
      spaceId,
      { url: 'https://hooks.example.com:443/tollbook', events: [] },
      strict,
    );
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json().url).toBe('https://hooks.example.com/tollbook');
  });

  it('applies the plan: none on free and starter (403 plan_required), 1 on pro, 5 + 5 per pack on scale', async () => {
    for (const plan of ['free', 'starter']) {
      const { owner, spaceId } = await space(plan);
      const res = await create(owner, spaceId, { url: target.url, events: [] });
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toBe('plan_required');
    }
    const pro = await space('pro');
    await subscription(pro.owner, pro.spaceId);
    const full = await create(pro.owner, pro.spaceId, { url: target.url, events: [] });
    expect(full.statusCode).toBe(422);
    expect(full.json()).toMatchObject({ error: 'subscription_limit_reached', details: { limit: 1 } });
    const scale = await space('scale');
    await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${scale.spaceId}`,
      session: scale.owner.token,
      payload: { subscription_packs: 1 },
    });
    const results = await Promise.all(
      Array.from({ length: 12 }, () => create(scale.owner, scale.spaceId, { url: target.url, events: [] })),
    );
    expect(results.filter((res) => res.statusCode === 201)).toHaveLength(10);
    expect(results.filter((res) => res.statusCode === 422)).toHaveLength(2);
  });
});

describe('DELETE, rotate-secret and resume', () => {
  it('deletes a subscription, after which nothing is sent to it; another space’s id is 404', async () => {
    const { owner, spaceId } = await space();
    const sub = await subscription(owner, spaceId);
    const other = await space();
    const foreign = await h.inject({
      method: 'DELETE',
      url: `${base(other.spaceId)}/${sub.id}`,
      session: other.owner.token,
    });
    expect(foreign.statusCode).toBe(404);
    const res = await h.inject({ method: 'DELETE', url: `${base(spaceId)}/${sub.id}`, session: owner.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: sub.id, deleted: true });
    const again = await h.inject({
      method: 'DELETE',
      url: `${base(spaceId)}/${sub.id}`,
      session: owner.token,
    });
    expect(again.statusCode).toBe(404);
    const before = target.arrivals.length;
    await moneyIn(spaceId);
    await worker(spaceId).drain();
    expect(target.arrivals.length).toBe(before);
  });

  it('rotates the secret: shown once, and the next delivery is signed with it', async () => {
    const { owner, spaceId } = await space();
    const sub = await subscription(owner, spaceId);
    const res = await h.inject({
      method: 'POST',
      url: `${base(spaceId)}/${sub.id}/rotate-secret`,
      session: owner.token,
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const rotated = res.json().secret as string;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(sub.secret);
    const eventId = await moneyIn(spaceId);
    await worker(spaceId).drain();
    const arrival = target.arrivals.find((item) => item.eventId === eventId)!;
    const expected = `sha256=${createHmac('sha256', rotated).update(arrival.body).digest('hex')}`;
    expect(arrival.headers['x-service-signature']).toBe(expected);
  });

  it('resumes an active subscription as a no-op, and answers 404 for an unknown one', async () => {
    const { owner, spaceId } = await space();
    const sub = await subscription(owner, spaceId);
    const res = await h.inject({
      method: 'POST',
      url: `${base(spaceId)}/${sub.id}/resume`,
      session: owner.token,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: sub.id, status: 'active' });
    const unknown = await h.inject({
      method: 'POST',
      url: `${base(spaceId)}/00000000-0000-4000-8000-000000000000/resume`,
      session: owner.token,
    });
    expect(unknown.statusCode).toBe(404);
  });
});

describe('the journal and retry', () => {
  it('pages deliveries newest first with status, attempt and response code, for 30 days', async () => {
    const { owner, spaceId } = await space();
    const sub = await subscription(owner, spaceId, failing.url);
    const old = await moneyIn(spaceId);
    await worker(spaceId).drain();
    clock.advance(31 * DAY_MS);
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      ids.push(await moneyIn(spaceId));
      await worker(spaceId).drain();
      clock.advance(1_000);
    }
    // Sessions last 30 days too: sign in again.
    const login = await h.inject({
      method: 'POST',
      url: '/app/api/login',
      payload: { email: owner.email, password: owner.password },
    });
    const session = login.json().session_token as string;
    const page = (query: string) =>
      h.inject({ method: 'GET', url: `${base(spaceId)}/${sub.id}/deliveries${query}`, session });
    const first = await page('?limit=2');
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().has_more, first.body).toBe(true);
    const items = first.json().items;
    expect(items.map((item: { event_id: string }) => item.event_id)).toEqual([ids[4], ids[3]]);
    expect(items[0]).toMatchObject({
      event: 'money.in',
      status: 'pending',
      attempt: 1,
      attempts_max: 8,
      response_code: 500,
    });
    expect(items[0].next_attempt_at).toBe(new Date(clock.now().getTime() - 1_000 + 60_000).toISOString());
    const second = await page(`?limit=2&starting_after=${items[1].id}`);
    const third = await page(`?limit=2&starting_after=${second.json().items[1].id}`);
    expect(
      [...second.json().items, ...third.json().items].map((item: { event_id: string }) => item.event_id),
    ).toEqual([ids[2], ids[1], ids[0]]);
    expect(third.json().has_more).toBe(false);
    expect(JSON.stringify(third.json())).not.toContain(old);
    expect((await page('?status=delivered')).json().items).toEqual([]);
    for (const bad of ['?limit=0', '?limit=201', '?limit=x', '?starting_after=nope', '?status=lost']) {
      expect((await page(bad)).statusCode, bad).toBe(422);
    }
    const stranger = await page('?starting_after=00000000-0000-4000-8000-000000000000');
    expect(stranger.statusCode).toBe(422);
  });

  it('retries a given-up delivery once more at once, with the next attempt number', async () => {
    const { owner, spaceId } = await space();
    const sub = await subscription(owner, spaceId, failing.url);
    const eventId = await moneyIn(spaceId);
    const run = worker(spaceId);
    for (const gap of [0, 60_000, 300_000, 900_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000]) {
      clock.advance(gap);
      await run.runOnce();
    }
    const journal = await h.inject({
      method: 'GET',
      url: `${base(spaceId)}/${sub.id}/deliveries`,
      session: owner.token,
    });
    const [given] = journal.json().items;
    expect(given).toMatchObject({ event_id: eventId, status: 'given_up', attempt: 8, next_attempt_at: null });
    const retry = await h.inject({
      method: 'POST',
      url: `${base(spaceId)}/${sub.id}/deliveries/${given.id}/retry`,
      session: owner.token,
    });
    expect(retry.statusCode, retry.body).toBe(200);
    expect(retry.json()).toMatchObject({ status: 'pending', attempt: 8, attempts_max: 9 });
    await run.runOnce();
    const last = failing.arrivals.filter((arrival) => arrival.eventId === eventId).at(-1)!;
    expect(last.attempt).toBe(9);
    const after = await h.inject({
      method: 'GET',
      url: `${base(spaceId)}/${sub.id}/deliveries`,
      session: owner.token,
    });
    expect(after.json().items[0]).toMatchObject({ status: 'given_up', attempt: 9 });
    const unknown = await h.inject({
      method: 'POST',
      url: `${base(spaceId)}/${sub.id}/deliveries/00000000-0000-4000-8000-000000000000/retry`,
      session: owner.token,
    });
    expect(unknown.statusCode).toBe(404);
  });

  it('refuses a retry while the subscription is paused (409)', async () => {
    const { owner, spaceId } = await space();
    const sub = await subscription(owner, spaceId, failing.url);
    await moneyIn(spaceId);
    await worker(spaceId).drain();
    await h.db
      .updateTable('webhook_subscriptions')
      .set({ status: 'paused' })
      .where('id', '=', sub.id)
      .execute();
    const journal = await h.inject({
      method: 'GET',
      url: `${base(spaceId)}/${sub.id}/deliveries`,
      session: owner.token,
    });
    const res = await h.inject({
      method: 'POST',
      url: `${base(spaceId)}/${sub.id}/deliveries/${journal.json().items[0].id}/retry`,
      session: owner.token,
    });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('conflict');
  });
});

describe('POST /app/api/spaces/{id}/webhooks/test', () => {
  const test = (owner: User, spaceId: string, payload: unknown) =>
    h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/webhooks/test`,
      session: owner.token,
      payload: payload as object,
    });

  it('sends a signed webhook.test to an address with the given secret', async () => {
    const { owner, spaceId } = await space();
    const res = await test(owner, spaceId, { url: target.url, secret: 'my-secret' });
    expect(res.statusCode, res.body).toBe(200);
    const out = res.json();
    expect(out).toMatchObject({ url: target.url, delivered: true, response_code: 200, error: null });
    expect(out.secret).toBeUndefined();
    const arrival = target.arrivals.find((item) => item.eventId === out.event_id)!;
    expect(JSON.parse(arrival.body.toString('utf8'))).toMatchObject({
      event: 'webhook.test',
      version: 1,
      test: true,
    });
    expect(arrival.headers['x-service-event']).toBe('webhook.test');
    expect(arrival.headers['x-service-delivery-attempt']).toBe('1');
    const expected = `sha256=${createHmac('sha256', 'my-secret').update(arrival.body).digest('hex')}`;
    expect(arrival.headers['x-service-signature']).toBe(expected);
  });

  it('makes a secret when none is given, uses a subscription’s own, and reports failures', async () => {
    const { owner, spaceId } = await space();
    const generated = await test(owner, spaceId, { url: target.url });
    expect(generated.json().secret).toMatch(/^whsec_/);
    const sub = await subscription(owner, spaceId);
    const viaSubscription = await test(owner, spaceId, { subscription_id: sub.id });
    const arrival = target.arrivals.find((item) => item.eventId === viaSubscription.json().event_id)!;
    const expected = `sha256=${createHmac('sha256', sub.secret).update(arrival.body).digest('hex')}`;
    expect(arrival.headers['x-service-signature']).toBe(expected);
    const failed = await test(owner, spaceId, { url: failing.url });
    expect(failed.json()).toMatchObject({
      delivered: false,
      response_code: 500,
      error: 'HTTP 500: not a 2xx answer.',
    });
  });

  it('refuses missing or conflicting targets and non-public addresses', async () => {
    const { owner, spaceId } = await space();
    expect((await test(owner, spaceId, {})).statusCode).toBe(422);
    const sub = await subscription(owner, spaceId);
    expect((await test(owner, spaceId, { subscription_id: sub.id, url: target.url })).statusCode).toBe(422);
    const metadata = await test(owner, spaceId, { url: 'http://169.254.169.254/' });
    expect(metadata.statusCode).toBe(422);
    expect(metadata.json().error).toBe('webhook_address_not_public');
    expect((await test(owner, spaceId, { subscription_id: 'nope' })).statusCode).toBe(422);
    expect(
      (await test(owner, spaceId, { subscription_id: '00000000-0000-4000-8000-000000000000' })).statusCode,
    ).toBe(404);
  });
});

describe('authorisation of every subscription route', () => {
  it('answers 401 without a session, 404 to a non-member, 403 to a member or viewer', async () => {
    const { owner, spaceId } = await space();
    const sub = await subscription(owner, spaceId);
    const journal = await h.inject({
      method: 'GET',
      url: `${base(spaceId)}/${sub.id}/deliveries`,
      session: owner.token,
    });
    expect(journal.statusCode).toBe(200);
    const did = '00000000-0000-4000-8000-000000000000';
    const routes: { method: 'GET' | 'POST' | 'DELETE'; url: string; payload?: object }[] = [
      { method: 'POST', url: base(spaceId), payload: { url: target.url, events: [] } },
      { method: 'GET', url: base(spaceId) },
      { method: 'DELETE', url: `${base(spaceId)}/${sub.id}` },
      { method: 'POST', url: `${base(spaceId)}/${sub.id}/rotate-secret` },
      { method: 'POST', url: `${base(spaceId)}/${sub.id}/resume` },
      { method: 'GET', url: `${base(spaceId)}/${sub.id}/deliveries` },
      { method: 'POST', url: `${base(spaceId)}/${sub.id}/deliveries/${did}/retry` },
      { method: 'POST', url: `/app/api/spaces/${spaceId}/webhooks/test`, payload: { url: target.url } },
    ];
    const stranger = await h.signup('Stranger');
    const member = await h.signup('Member');
    const viewer = await h.signup('Viewer');
    await h.addMember(owner, spaceId, member, 'member');
    await h.addMember(owner, spaceId, viewer, 'viewer');
    for (const route of routes) {
      const label = `${route.method} ${route.url}`;
      expect((await h.inject({ ...route })).statusCode, label).toBe(401);
      const foreign = await h.inject({ ...route, session: stranger.token });
      expect(foreign.statusCode, label).toBe(404);
      for (const person of [member, viewer]) {
        const res = await h.inject({ ...route, session: person.token });
        expect(res.statusCode, label).toBe(403);
        expect(res.json().error).toBe('forbidden');
      }
    }
    // An admin may do what the owner does.
    const admin = await h.signup('Admin');
    await h.addMember(owner, spaceId, admin, 'admin');
    expect((await h.inject({ method: 'GET', url: base(spaceId), session: admin.token })).statusCode).toBe(
      200,
    );
    expect(
      (await h.inject({ method: 'GET', url: base(spaceId), session: owner.token })).json().items,
    ).toHaveLength(1);
  });
});
