import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createSenders, WebhookWorker } from '../../src/features/webhooks/index.ts';
import { enqueueEvent } from '../../src/platform/outbox/outbox.ts';
import type { Harness } from '../harness.ts';
import { sampleMoneyIn } from '../sample-events.ts';
import { type Receiver, startReceiver } from '../webhook-receiver.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// Connections → Event subscriptions in Chromium: add a subscription to a local receiver that
// fails, watch the journal fill, find Retry refused while paused, Resume, and see it delivered.

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));
const HOUR = 3600_000;

let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
let h: Harness;
let base: string;
let receiver: Receiver;
let failing = true;
const clock = new ManualClock(new Date());
const senders = createSenders({ allowPrivate: true, resolver: async () => ['127.0.0.1'] });

beforeAll(async () => {
  if (!chromiumInstalled) return;
  app = await startBrowserApp({
    clock,
    env: { RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_PRIVATE: '1' },
  });
  ({ h, base } = app);
  receiver = await startReceiver({ statusFor: () => (failing ? 500 : 200) });
});
afterAll(async () => {
  await receiver?.close();
  await app?.close();
});
beforeEach(({ skip }) => requireChromium(skip));

async function waitForText(page: Page, selector: string, wanted: RegExp, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  let current = '';
  while (Date.now() < deadline) {
    const found = page.locator(selector);
    current =
      (await found.count()) > 0 ? ((await found.first().textContent()) ?? '').replace(/\s+/g, ' ') : '';
    if (wanted.test(current)) return current;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${selector} read "${current}", not ${wanted}, after ${timeoutMs} ms.`);
}

const moneyIn = (spaceId: string) => enqueueEvent(h.db, sampleMoneyIn({ spaceId, at: clock.now() }));

describe('Connections in a browser', () => {
  it('adds a subscription to a failing receiver, shows its journal, refuses Retry while paused, resumes and delivers', async () => {
    const world = await h.world();
    const worker = new WebhookWorker(
      { db: h.db, clock, secrets: h.deps.secrets, senders },
      { spaceIds: [world.spaceId] },
    );
    const context = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addCookies([{ name: 'tb_session', value: world.owner.token, url: base }]);
    const page = await context.newPage();
    try {
      await page.goto(`${base}/app/books/${world.spaceId}/subscriptions`);
      await page.fill('#field-url', receiver.url);
      await page.check('input[name="events"][value="money.in"]');
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      const secret = await waitForText(page, '#subscription-secret', /^whsec_/);
      expect(await page.getByText('you will not see this again').count()).toBe(1);
      expect(await page.locator('.table-wrap tbody tr').first().textContent()).toContain('money.in');
      mkdirSync(RESULTS_DIR, { recursive: true });
      await page.screenshot({ path: `${RESULTS_DIR}app-subscriptions.png`, fullPage: true });

      // A day of failures pauses it.
      await moneyIn(world.spaceId);
      await worker.drain();
      for (let hour = 4; hour <= 28; hour += 4) {
        clock.advance(4 * HOUR);
        await moneyIn(world.spaceId);
        await worker.drain();
      }
      expect(receiver.arrivals.length).toBeGreaterThan(0);
      expect(receiver.arrivals[0]!.headers['x-service-signature']).toBeDefined();
      expect(secret).toMatch(/^whsec_/);

      await page.getByRole('link', { name: 'Journal' }).click();
      await waitForText(page, 'h1', /Journal/);
      await waitForText(page, '.notice.warn', /Paused after failing deliveries/);
      const rows = page.locator('.table-wrap > table > tbody > tr');
      expect(await rows.count()).toBeGreaterThan(1);
      expect(await rows.first().textContent()).toContain('500');
      await page.screenshot({ path: `${RESULTS_DIR}app-journal.png`, fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: `${RESULTS_DIR}app-journal-phone.png`, fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });

      // Retry while paused: refused in place with the sentence.
      await rows.first().getByRole('button', { name: 'Retry' }).click();
      await waitForText(page, '.notice.error', /The subscription is paused; resume it/);

      // Resume: the receiver now answers 200 and the held deliveries go through.
      failing = false;
      await page.locator('.notice.warn').getByRole('button', { name: 'Resume' }).click();
      await waitForText(page, '.notice.ok', /Resumed/);
      await worker.drain();
      await page.goto(
        `${base}/app/books/${world.spaceId}/subscriptions/${await subscriptionId(world)}?status=delivered`,
      );
      expect(await page.locator('.table-wrap > table > tbody > tr').count()).toBeGreaterThan(0);
      expect(await page.locator('.table-wrap > table > tbody > tr').first().textContent()).toContain('200');

      // Retry of a delivered row sends it once more.
      await page
        .locator('.table-wrap > table > tbody > tr')
        .first()
        .getByRole('button', { name: 'Retry' })
        .click();
      await waitForText(page, '.notice.ok', /Retry scheduled/);
    } finally {
      await context.close();
    }
  });
});

async function subscriptionId(world: { spaceId: string; owner: { token: string } }): Promise<string> {
  const list = await h.inject({
    method: 'GET',
    url: `/app/api/spaces/${world.spaceId}/subscriptions`,
    session: world.owner.token,
  });
  return list.json().items[0].id;
}
