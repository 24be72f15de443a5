import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startX402World, type X402World } from '../chain/x402-setup.ts';
import { chromiumInstalled, closeChromium, launchChromium, requireChromium } from './browser.ts';

// An x402 payment's signed receipt as the seller meets it in Chromium: on the payment's row
// under Income, a link that downloads the receipt file.

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));

let w: X402World | undefined;
let browser: Browser | undefined;
beforeAll(async () => {
  if (!chromiumInstalled) return;
  w = await startX402World();
  browser = await launchChromium();
});
afterAll(async () => {
  await closeChromium(browser);
  await w?.close();
});
beforeEach(({ skip }) => requireChromium(skip));

async function shoot(page: Page, name: string) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  await page.screenshot({ path: `${RESULTS_DIR}${name}.png`, fullPage: true });
  const desktop = page.viewportSize();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${RESULTS_DIR}${name}-phone.png`, fullPage: true });
  if (desktop) await page.setViewportSize(desktop);
}

describe('an x402 receipt in a browser', () => {
  it("shows the signed receipt on the payment's Income row and downloads it", async () => {
    const world = w!;
    const s = await world.seller();
    const request = await world.mint(s.key.key, '2', {
      account_id: s.account.id,
      resource: 'https://api.example.com/v1/forecast',
    });
    const payer = await world.payer(10_000_000n);
    const paid = await world.payingFetch(payer)(request.url, { headers: { accept: 'application/json' } });
    expect(paid.status).toBe(200);
    const context = await browser!.newContext({
      viewport: { width: 1280, height: 900 },
      acceptDownloads: true,
    });
    await context.addCookies([{ name: 'tb_session', value: s.owner.token, url: world.base }]);
    const page = await context.newPage();
    const rows = await world.h.inject({
      method: 'GET',
      url: `/app/api/spaces/${s.spaceId}/income`,
      session: s.owner.token,
    });
    const row = rows.json().items[0];
    const query = new URLSearchParams({ ref: row.ref, day: row.day, currency: row.currency });
    await page.goto(`${world.base}/app/books/${s.spaceId}/income/payments?${query}`, { timeout: 10_000 });
    const link = page.locator('[data-field="receipt"] a');
    expect(await link.textContent({ timeout: 5_000 })).toBe('Receipt');
    await shoot(page, 'x402-receipt-income-payments');
    const href = await link.getAttribute('href');
    const file = await context.request.get(`${world.base}${href}`);
    expect(file.status()).toBe(200);
    expect(file.headers()['content-disposition']).toMatch(
      /^attachment; filename="x402-receipt-eip155-31337-0x[0-9a-f]{64}\.json"$/,
    );
    expect(await file.json()).toMatchObject({ format: 'eip712', payload: { payer: payer.address } });
    await context.close();
  });
});
