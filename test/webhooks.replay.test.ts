import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../src/features/keys/index.ts';
import { createSpace } from '../src/features/spaces/index.ts';
import { createUser } from '../src/features/users/index.ts';
import {
  createSenders,
  replayCommand,
  verifySignature,
  WebhookWorker,
} from '../src/features/webhooks/index.ts';
import { loadConfig } from '../src/platform/config.ts';
import { enqueueEvent } from '../src/platform/outbox/outbox.ts';
import { createRuntime } from '../src/runtime.ts';
import { createHarness, type Harness } from './harness.ts';
import { sampleMoneyIn, samplePaymentRequestPaid } from './sample-events.ts';
import { startReceiver } from './webhook-receiver.ts';

// Issue 22 item 2: the key channel's journal and Retry in the app API, and
// `tollbook webhooks replay`, which sends deliveries of either channel again with their
// original event ids.

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
});
afterAll(() => h.close());

async function keyWorld(statusFor?: (nth: number) => number) {
  const target = await startReceiver({ statusFor: (_arrival, nth) => statusFor?.(nth) ?? 200 });
  const senders = createSenders({ allowPrivate: true, resolver: h.deps.resolver });
  const world = await h.world({ webhook_url: target.url });
  const worker = new WebhookWorker(
    { db: h.db, clock: h.clock, secrets: h.deps.secrets, senders },
    { spaceIds: [world.spaceId] },
  );
  const keyEvent = () =>
    enqueueEvent(
      h.db,
      samplePaymentRequestPaid({ spaceId: world.spaceId, keyId: world.key.id, at: new Date() }),
    );
  const journal = (query = '', session = world.owner.token, keyId = world.key.id) =>
    h.inject({
      method: 'GET',
      url: `/app/api/spaces/${world.spaceId}/keys/${keyId}/deliveries${query}`,
      session,
    });
  const close = () => Promise.all([target.close(), senders.key.close(), senders.subscription.close()]);
  return { ...world, target, worker, keyEvent, journal, close };
}

describe('the key channel journal', () => {
  it('lists the key’s deliveries with event, status, attempt and response code; Retry sends the same event again', async () => {
    const w = await keyWorld((nth) => (nth === 1 ? 503 : 200));
    try {
      const eventId = await w.keyEvent();
      await w.worker.runOnce();
      const listed = await w.journal();
      expect(listed.statusCode).toBe(200);
      expect(listed.json().items).toHaveLength(1);
      const row = listed.json().items[0];
      expect(row).toMatchObject({
        event_id: eventId,
        event: 'payment_request.paid',
        status: 'pending',
        attempt: 1,
        response_code: 503,
        next_attempt_at: expect.any(String),
      });
      const retried = await h.inject({
        method: 'POST',
        url: `/app/api/spaces/${w.spaceId}/keys/${w.key.id}/deliveries/${row.id}/retry`,
        session: w.owner.token,
      });
      expect(retried.statusCode).toBe(200);
      expect(retried.json()).toMatchObject({ id: row.id, status: 'pending' });
      await w.worker.runOnce();
      expect((await w.journal()).json().items[0]).toMatchObject({
        status: 'delivered',
        attempt: 2,
        response_code: 200,
      });
      expect(w.target.arrivals.map((arrival) => arrival.eventId)).toEqual([eventId, eventId]);
      // Filters and paging work as on a subscription's journal.
      expect((await w.journal('?status=given_up')).json().items).toEqual([]);
      expect((await w.journal('?limit=0')).statusCode).toBe(422);
    } finally {
      await w.close();
    }
  });

  it('answers only owners and admins of the space, only for its own keys and deliveries, and retries nothing to a revoked key', async () => {
    const w = await keyWorld();
    const other = await keyWorld();
    try {
      await w.keyEvent();
      await other.keyEvent();
      await w.worker.runOnce();
      await other.worker.runOnce();
      const theirs = (await other.journal()).json().items[0].id as string;
      const member = await h.signup('Member');
      await h.addMember(w.owner, w.spaceId, member, 'member');
      expect((await w.journal('', member.token)).statusCode).toBe(403);
      expect((await w.journal('', '')).statusCode).toBe(401);
      expect((await w.journal('', other.owner.token)).statusCode).toBe(404);
      expect((await w.journal('', w.owner.token, other.key.id)).statusCode).toBe(404);
      const foreign = await h.inject({
        method: 'POST',
        url: `/app/api/spaces/${w.spaceId}/keys/${w.key.id}/deliveries/${theirs}/retry`,
        session: w.owner.token,
      });
      expect(foreign.statusCode).toBe(404);
      expect((await w.journal(`?starting_after=${theirs}`)).statusCode).toBe(422);
      // A revoked key keeps its journal but has nowhere to send a retry to.
      const mine = (await w.journal()).json().items[0].id as string;
      const revoked = await h.inject({
        method: 'DELETE',
        url: `/app/api/spaces/${w.spaceId}/keys/${w.key.id}`,
        session: w.owner.token,
      });
      expect(revoked.statusCode).toBeLessThan(300);
      expect((await w.journal()).json().items).toHaveLength(1);
      const refused = await h.inject({
        method: 'POST',
        url: `/app/api/spaces/${w.spaceId}/keys/${w.key.id}/deliveries/${mine}/retry`,
        session: w.owner.token,
      });
      expect(refused.statusCode).toBe(409);
      expect(refused.json()).toMatchObject({ error: 'conflict' });
    } finally {
      await Promise.all([w.close(), other.close()]);
    }
  });
});

describe('tollbook webhooks replay', () => {
  it('sends the deliveries of one event again, or of every event since a time, on both channels, with their original ids', async () => {
    const w = await keyWorld();
    try {
      const sub = await h.inject({
        method: 'POST',
        url: `/app/api/spaces/${w.spaceId}/subscriptions`,
        session: w.owner.token,
        payload: { url: w.target.url, events: [] },
      });
      expect(sub.statusCode).toBe(201);
      const keyEventId = await w.keyEvent();
      const bookEventId = await enqueueEvent(h.db, sampleMoneyIn({ spaceId: w.spaceId, at: new Date() }));
      await w.worker.runOnce();
      expect(w.target.arrivals).toHaveLength(2);
      const host = { ...h.deps, database: { db: h.db } };
      const out: string[] = [];
      const write = { write: (text: string) => out.push(text) };
      await replayCommand(host, w.spaceId, { eventId: bookEventId }, write);
      expect(w.target.arrivals.map((arrival) => arrival.eventId)).toEqual(
        expect.arrayContaining([keyEventId, bookEventId, bookEventId]),
      );
      expect(w.target.arrivals).toHaveLength(3);
      const again = w.target.arrivals[2]!;
      // The same event, signed again with the subscription's secret: the receiver can dedupe on the id.
      expect(again.headers['x-service-event-id']).toBe(bookEventId);
      expect(
        verifySignature(sub.json().secret, again.body, String(again.headers['x-service-signature'])),
      ).toBe(true);
      expect(out.join('')).toMatch(
        new RegExp(
          `Replaying 1 deliveries[\\s\\S]*delivered\\s+money\\.in.*attempt 2/.*event ${bookEventId}.*HTTP 200`,
        ),
      );

      await replayCommand(host, w.spaceId, { since: new Date(Date.now() - 60_000) }, write);
      expect(w.target.arrivals).toHaveLength(5);
      expect(
        w.target.arrivals
          .slice(3)
          .map((arrival) => arrival.eventId)
          .sort(),
      ).toEqual([keyEventId, bookEventId].sort());
      // Nothing since a time to come; another space's events are never touched.
      out.length = 0;
      await replayCommand(host, w.spaceId, { since: new Date(Date.now() + 60_000) }, write);
      expect(out.join('')).toContain('No deliveries to replay');
      expect(w.target.arrivals).toHaveLength(5);
    } finally {
      await w.close();
    }
  });

  it('runs as a real command: usage errors exit 2; a replay prints each delivery it sent', async () => {
    const target = await startReceiver();
    const dataDir = mkdtempSync(join(tmpdir(), 'tollbook-replay-'));
    // The command's database is the suite's PostgreSQL when the suite runs on one (the replay
    // reads and sends only the space made here), else an embedded one made in DATA_DIR: each pass
    // runs the real command on its own kind of database, and only the embedded one pays for initdb.
    const env = {
      ...process.env,
      DATA_DIR: dataDir,
      DATABASE_URL: process.env.DATABASE_URL ?? '',
      LOG_LEVEL: 'silent',
      WEBHOOK_ALLOW_PRIVATE: '1',
    };
    const run = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, ['bin/tollbook.mjs', ...args], { env }, (error, stdout, stderr) =>
          resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
        );
      });
    try {
      expect((await run(['webhooks', 'replay', '--space', 'x'])).code).toBe(2);
      const both = await run([
        'webhooks',
        'replay',
        '--space',
        crypto.randomUUID(),
        '--event-id',
        crypto.randomUUID(),
        '--since',
        '2026-01-01T00:00:00Z',
      ]);
      expect(both.code).toBe(2);
      expect(both.stderr).toContain('exactly one of --event-id and --since');
      const badTime = await run([
        'webhooks',
        'replay',
        '--space',
        crypto.randomUUID(),
        '--since',
        'yesterday',
      ]);
      expect(badTime.code).toBe(2);
      // A space with a key webhook and one delivered event, made in the command's own database.
      const runtime = await createRuntime(loadConfig({ ...env, NODE_ENV: 'development' }), { logger: false });
      let spaceId: string;
      let eventId: string;
      const senders = createSenders({ allowPrivate: true, resolver: runtime.resolver });
      try {
        const db = runtime.database.db;
        const user = await createUser(
          { db, clock: runtime.clock },
          {
            email: `replay-${crypto.randomUUID()}@example.com`,
            password: 'correct horse battery',
            name: 'Replay',
          },
        );
        const space = await createSpace(
          { db, clock: runtime.clock, authStamps: runtime.authStamps },
          user.id,
          { name: 'Replay', base_currency: 'USD' },
        );
        spaceId = space.id;
        const key = await issueKey(
          {
            db,
            clock: runtime.clock,
            secrets: runtime.secrets,
            authStamps: runtime.authStamps,
            resolver: runtime.resolver,
            webhookAllowPrivate: true,
          },
          user.id,
          spaceId,
          { name: 'Replay key', scopes: ['payments'], webhook_url: target.url },
        );
        eventId = await enqueueEvent(
          db,
          samplePaymentRequestPaid({ spaceId, keyId: key.id, at: new Date() }),
        );
        await new WebhookWorker(
          { db, clock: runtime.clock, secrets: runtime.secrets, senders },
          { spaceIds: [spaceId] },
        ).runOnce();
      } finally {
        await Promise.all([senders.key.close(), senders.subscription.close()]);
        await runtime.close();
      }
      expect(target.arrivals).toHaveLength(1);
      const replayed = await run(['webhooks', 'replay', '--space', spaceId, '--event-id', eventId]);
      expect(replayed.code, replayed.stderr).toBe(0);
      process.stdout.write(
        `$ tollbook webhooks replay --space ${spaceId} --event-id ${eventId}\n${replayed.stdout}`,
      );
      expect(replayed.stdout).toMatch(
        new RegExp(
          `Replaying 1 deliveries\\.\\n.*delivered\\s+payment_request\\.paid\\s+key .*attempt 2/2\\s+event ${eventId}\\s+HTTP 200`,
        ),
      );
      expect(target.arrivals.map((arrival) => arrival.eventId)).toEqual([eventId, eventId]);
    } finally {
      await target.close();
    }
  }, 300_000);
});
