import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { validateDiscoveryExtension } from '@x402/extensions/bazaar';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Body } from '../chain/x402-setup.ts';
import type { Harness } from '../harness.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// An endpoint card described for x402 clients on the Endpoints screen in Chromium: the form's
// refusal of a malformed schema, then a description the discovery list publishes.

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));
const CARD = { number: '4242424242424242', exp: '12/34', cvc: '123' };

let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
let h: Harness;
let base: string;
beforeAll(async () => {
  if (!chromiumInstalled) return;
  app = await startBrowserApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  ({ h, base } = app);
});
afterAll(() => app?.close());
beforeEach(({ skip }) => requireChromium(skip));

async function shoot(page: Page, name: string) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  await page.screenshot({ path: `${RESULTS_DIR}${name}.png`, fullPage: true });
  const desktop = page.viewportSize();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${RESULTS_DIR}${name}-phone.png`, fullPage: true });
  if (desktop) await page.setViewportSize(desktop);
}

describe('the bazaar form of an endpoint card', () => {
  it('refuses a schema that is not JSON, then saves a description the discovery list publishes', async () => {
    const address = `https://weather-${Date.now()}.example.com/v1/forecast`;
    const world = await h.world({ scopes: ['payments'] });
    const bank = await h.makeAccount(world.spaceId, { kind: 'bank', name: 'USD bank', currency: 'USD' });
    const minted = await h.inject({
      method: 'POST',
      url: '/integration/payment-requests',
      key: world.key.key,
      payload: { account_id: bank.id, amount: '2', resource: address },
    });
    await h.inject({ method: 'POST', url: `/pay/${minted.json().token}/card`, payload: CARD });
    const context = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addCookies([{ name: 'tb_session', value: world.owner.token, url: base }]);
    const page = await context.newPage();
    await page.goto(`${base}/app/books/${world.spaceId}/endpoints`);
    await page.getByText('Describe for x402 clients').click();
    await page.getByLabel('Description').fill('A three-day forecast for a city');
    await page.getByLabel('HTTP method').selectOption('POST');
    await page.getByLabel('Input schema (JSON Schema)').fill('{"type": "object", "properties": {');
    await page.getByRole('button', { name: 'Save the description' }).click();
    await page.waitForSelector('.bazaar span.error');
    expect(await page.locator('.bazaar span.error').textContent()).toBe(
      'The input schema must be a JSON object.',
    );
    await shoot(page, 'endpoints-bazaar-refused');
    await page
      .getByLabel('Input schema (JSON Schema)')
      .fill('{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}');
    await page.getByLabel('Input example').fill('{"city": "Lisbon"}');
    await page.getByLabel('Output schema (JSON Schema)').fill('{"type": "object"}');
    await page.getByLabel('Output example').fill('{"forecast": "Sunny"}');
    await page.getByRole('button', { name: 'Save the description' }).click();
    await page.waitForSelector('[data-field="method"]:has-text("POST")');
    expect(await page.locator('[data-field="description"]').textContent()).toBe(
      'A three-day forecast for a city',
    );
    await page.getByText('Describe for x402 clients').click();
    await shoot(page, 'endpoints-bazaar-saved');
    await context.close();
    const cards = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${world.spaceId}/endpoints`,
      session: world.owner.token,
    });
    const id = (cards.json().items as Body[])[0]!.id;
    await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${world.spaceId}/endpoints/${id}`,
      session: world.owner.token,
      payload: { findable: true },
    });
    const listed = await h.inject({ method: 'GET', url: '/x402/discovery/resources?limit=100' });
    const item = (listed.json().items as Body[]).find((entry) => entry.resource === address);
    expect(validateDiscoveryExtension(item!.extensions.bazaar)).toEqual({ valid: true });
  });
});
