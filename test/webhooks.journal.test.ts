import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import { pruneJournal } from '../src/features/webhooks/delivery-service.ts';
import { createSenders, type Senders, WebhookWorker } from '../src/features/webhooks/index.ts';
import { recordAttempts } from '../src/features/webhooks/store.ts';
import { enqueueEvent } from '../src/platform/outbox/outbox.ts';
import { createHarness, type Harness } from './harness.ts';
import { sampleMoneyIn } from './sample-events.ts';

// The webhook journal against a real loopback receiver: every attempt is kept with its status,
// duration and the first 2 KB of the answer; a delivery's page shows the body as sent and the
// attempts; a subscription's test sends are listed; the retention prunes all of it.

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

let h: Harness;
let clock: ManualClock;
let senders: Senders;
let server: Server;
let url: string;
/** The receiver's n-th answer (from 1): a 503 with a 5 KB body, then a 200 with a short one. */
let answers = 0;
const FIRST_BODY = `${'é'.repeat(10)}${'x'.repeat(5 * 1024)}`;

beforeAll(async () => {
  clock = new ManualClock(new Date());
  h = await createHarness({ clock, env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
  senders = createSenders({ allowPrivate: true, resolver: h.deps.resolver, timeoutMs: 2_000 });
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      answers += 1;
      const test = req.headers['x-service-event'] === 'webhook.test';
      if (!test && answers === 1) res.writeHead(503).end(FIRST_BODY);
      else res.writeHead(200, { 'content-type': 'text/plain' }).end(test ? 'test ok' : 'thanks');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await Promise.all([senders.key.close(), senders.subscription.close()]);
  await h.close();
});

const cookie = (token: string) => ({ cookie: `tb_session=${token}` });

describe('the webhook journal', () => {
  it('records each attempt, shows the delivery with its payload, lists test sends and prunes them all', async () => {
    const { owner, spaceId } = await h.world();
    const created = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/subscriptions`,
      session: owner.token,
      payload: { url, events: ['money.in'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const sid = (created.json() as { id: string }).id;
    const eventId = await enqueueEvent(h.db, sampleMoneyIn({ spaceId, at: clock.now() }));
    const worker = new WebhookWorker(
      { db: h.db, clock, secrets: h.deps.secrets, senders },
      { spaceIds: [spaceId] },
    );

    // Attempt 1 fails with a 5 KB answer; the delivery page shows it and the next attempt's time.
    await worker.runOnce();
    const delivery = await h.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 503 });
    const page = `/app/books/${spaceId}/subscriptions/${sid}/deliveries/${delivery.id}`;
    const pending = await h.inject({ method: 'GET', url: page, headers: cookie(owner.token) });
    expect(pending.statusCode, pending.body).toBe(200);
    expect(pending.body).toContain('Next attempt');
    expect(pending.body).toContain(delivery.next_attempt_at.toISOString());

    // Attempt 2, a minute later, succeeds.
    clock.advance(MINUTE);
    await worker.runOnce();
    const attempts = await h.db
      .selectFrom('webhook_delivery_attempts')
      .selectAll()
      .where('delivery_id', '=', delivery.id)
      .orderBy('attempt')
      .execute();
    expect(attempts.map((row) => [row.attempt, row.status_code, row.space_id])).toEqual([
      [1, 503, spaceId],
      [2, 200, spaceId],
    ]);
    expect(attempts[1]!.attempted_at.getTime() - attempts[0]!.attempted_at.getTime()).toBe(MINUTE);
    for (const row of attempts) {
      expect(row.duration_ms).toBeGreaterThanOrEqual(0);
      expect(row.duration_ms).toBeLessThan(2_000);
    }
    // 5 KB cut to the first 2,048 bytes: ten two-byte characters and 2,028 x.
    expect(attempts[0]!.response_excerpt).toBe(FIRST_BODY.slice(0, 10 + 2_028));
    expect(Buffer.byteLength(attempts[0]!.response_excerpt!)).toBe(2_048);
    expect(attempts[0]!.error).toBe('HTTP 503: not a 2xx answer.');
    expect(attempts[1]).toMatchObject({ response_excerpt: 'thanks', error: null });

    // The page: the payload as sent (pretty-printed), both attempts, no next attempt any more.
    const shown = await h.inject({ method: 'GET', url: page, headers: cookie(owner.token) });
    expect(shown.statusCode).toBe(200);
    const event = await h.db
      .selectFrom('outbox_events')
      .select(['payload', 'occurred_at'])
      .where('id', '=', eventId)
      .executeTakeFirstOrThrow();
    const sent = { event: 'money.in', version: 1, at: event.occurred_at.toISOString(), ...event.payload };
    const escaped = JSON.stringify(sent, null, 2).replaceAll('"', '&quot;');
    expect(shown.body.includes(escaped) || shown.body.includes(JSON.stringify(sent, null, 2))).toBe(true);
    expect(shown.body).toContain('503');
    expect(shown.body).toContain('thanks');
    expect(shown.body).toContain('x'.repeat(2_028));
    expect(shown.body).not.toContain('x'.repeat(2_029));
    expect(shown.body).not.toContain('Next attempt');

    // The journal links the row to its page.
    const journal = await h.inject({
      method: 'GET',
      url: `/app/books/${spaceId}/subscriptions/${sid}`,
      headers: cookie(owner.token),
    });
    expect(journal.statusCode).toBe(200);
    expect(journal.body).toContain(`href="${page}"`);
    expect(journal.body).toContain('No test sends yet');

    // A test send is recorded and listed in the journal.
    const test = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/webhooks/test`,
      session: owner.token,
      payload: { subscription_id: sid },
    });
    expect(test.statusCode, test.body).toBe(200);
    const testEventId = (test.json() as { event_id: string }).event_id;
    const sends = await h.db
      .selectFrom('webhook_test_sends')
      .selectAll()
      .where('subscription_id', '=', sid)
      .execute();
    expect(sends).toHaveLength(1);
    expect(sends[0]).toMatchObject({
      id: testEventId,
      space_id: spaceId,
      delivered: true,
      status_code: 200,
      response_excerpt: 'test ok',
    });
    const listed = await h.inject({
      method: 'GET',
      url: `/app/books/${spaceId}/subscriptions/${sid}`,
      headers: cookie(owner.token),
    });
    expect(listed.body).toContain('Test sends');
    expect(listed.body).toContain('test ok');
    expect(listed.body).not.toContain('No test sends yet');

    // An unknown delivery is a 404, not a 500.
    const missing = await h.inject({
      method: 'GET',
      url: `/app/books/${spaceId}/subscriptions/${sid}/deliveries/${crypto.randomUUID()}`,
      headers: cookie(owner.token),
    });
    expect(missing.statusCode).toBe(404);

    // The retention removes the event, its delivery, the attempts and the test send.
    clock.advance(31 * DAY);
    await pruneJournal({ db: h.db, clock }, { spaceIds: [spaceId] });
    const left = await h.db
      .selectFrom('webhook_delivery_attempts')
      .select('attempt')
      .where('delivery_id', '=', delivery.id)
      .execute();
    expect(left).toEqual([]);
    const sendsLeft = await h.db
      .selectFrom('webhook_test_sends')
      .select('id')
      .where('subscription_id', '=', sid)
      .execute();
    expect(sendsLeft).toEqual([]);
  });

  it('records no attempt for a recorder whose lease is gone', async () => {
    const { owner, spaceId } = await h.world();
    const created = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/subscriptions`,
      session: owner.token,
      payload: { url, events: [] },
    });
    expect(created.statusCode).toBe(201);
    const eventId = await enqueueEvent(h.db, sampleMoneyIn({ spaceId, at: clock.now() }));
    await new WebhookWorker(
      { db: h.db, clock, secrets: h.deps.secrets, senders },
      { spaceIds: [spaceId] },
    ).runOnce();
    const delivery = await h.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'attempts'])
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
    const applied = await recordAttempts(h.db, [
      {
        id: delivery.id,
        leaseToken: crypto.randomUUID(),
        attempt: delivery.attempts + 1,
        status: 'delivered',
        nextAttemptAt: null,
        statusCode: 200,
        error: null,
        at: clock.now(),
        durationMs: 5,
        responseExcerpt: 'late',
      },
    ]);
    expect(applied).toEqual([]);
    const rows = await h.db
      .selectFrom('webhook_delivery_attempts')
      .select('attempt')
      .where('delivery_id', '=', delivery.id)
      .execute();
    expect(rows).toEqual([{ attempt: delivery.attempts }]);
  });
});
