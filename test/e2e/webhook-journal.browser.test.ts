import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createSenders, WebhookWorker } from '../../src/features/webhooks/index.ts';
import { enqueueEvent } from '../../src/platform/outbox/outbox.ts';
import type { Harness } from '../harness.ts';
import { sampleMoneyIn } from '../sample-events.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// The journal and a delivery's page in Chromium, at desktop and phone widths: a receiver that
// fails once with a long answer and then succeeds, and a test send listed in the journal.

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));

let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
let h: Harness;
let base: string;
let server: Server;
let url: string;
let answers = 0;
const clock = new ManualClock(new Date());
const senders = createSenders({ allowPrivate: true, resolver: async () => ['127.0.0.1'] });
const LONG_ANSWER = JSON.stringify({ error: 'upstream unavailable', detail: 'retry later '.repeat(400) });

beforeAll(async () => {
  if (!chromiumInstalled) return;
  app = await startBrowserApp({
    clock,
    env: { RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_PRIVATE: '1' },
  });
  ({ h, base } = app);
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      answers += 1;
      if (answers === 1) res.writeHead(503, { 'content-type': 'application/json' }).end(LONG_ANSWER);
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  if (server) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  await Promise.all([senders.key.close(), senders.subscription.close()]);
  await app?.close();
});
beforeEach(({ skip }) => requireChromium(skip));

describe('the webhook journal in a browser', () => {
  it('shows attempts and the payload on the delivery page and the test send in the journal', async () => {
    const world = await h.world();
    const created = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${world.spaceId}/subscriptions`,
      session: world.owner.token,
      payload: { url, events: ['money.in'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const sid = (created.json() as { id: string }).id;
    await enqueueEvent(h.db, sampleMoneyIn({ spaceId: world.spaceId, at: clock.now() }));
    const worker = new WebhookWorker(
      { db: h.db, clock, secrets: h.deps.secrets, senders },
      { spaceIds: [world.spaceId] },
    );
    await worker.drain();
    clock.advance(60_000);
    await worker.drain();

    const context = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addCookies([{ name: 'tb_session', value: world.owner.token, url: base }]);
    const page = await context.newPage();
    try {
      mkdirSync(RESULTS_DIR, { recursive: true });
      await page.goto(`${base}/app/books/${world.spaceId}/subscriptions`);
      await page.getByRole('button', { name: 'Send test' }).click();
      await page.locator('.notice.ok').waitFor();
      expect(await page.locator('.notice.ok').textContent()).toContain('Test delivered');

      await page.goto(`${base}/app/books/${world.spaceId}/subscriptions/${sid}`);
      expect(await page.locator('h2', { hasText: 'Test sends' }).count()).toBe(1);
      expect(await page.locator('body').textContent()).toContain('{"received":true}');
      await page.screenshot({ path: `${RESULTS_DIR}app-webhook-journal.png`, fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: `${RESULTS_DIR}app-webhook-journal-phone.png`, fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });

      await page.getByRole('link', { name: 'money.in' }).click();
      await page.locator('h2', { hasText: 'Payload' }).waitFor();
      expect(await page.locator('pre.payload').first().textContent()).toContain('"event": "money.in"');
      const attempts = page.locator('.table-wrap tbody tr');
      expect(await attempts.count()).toBe(2);
      expect(await attempts.nth(0).textContent()).toContain('503');
      expect(await attempts.nth(1).textContent()).toContain('200');
      await page.screenshot({ path: `${RESULTS_DIR}app-webhook-delivery.png`, fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: `${RESULTS_DIR}app-webhook-delivery-phone.png`, fullPage: true });
    } finally {
      await context.close();
    }
  });
});
