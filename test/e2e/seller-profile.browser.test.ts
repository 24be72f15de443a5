import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness, User } from '../harness.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// Book settings' seller profile as an owner meets it in Chromium: filled in, refused in place
// for a bad handle, saved, and printed on the invoice sent afterwards.

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));

let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
let h: Harness;
let base: string;

beforeAll(async () => {
  if (!chromiumInstalled) return;
  app = await startBrowserApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  ({ h, base } = app);
});
afterAll(async () => {
  await app?.close();
});
beforeEach(({ skip }) => requireChromium(skip));

async function signedInPage(user: User): Promise<{ page: Page; problems: string[] }> {
  const context = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addCookies([{ name: 'tb_session', value: user.token, url: base }]);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  return { page, problems };
}

async function shoot(page: Page, name: string) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  await page.screenshot({ path: `${RESULTS_DIR}${name}.png`, fullPage: true });
  const desktop = page.viewportSize();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${RESULTS_DIR}${name}-phone.png`, fullPage: true });
  if (desktop) await page.setViewportSize(desktop);
}

describe('the seller profile in Book settings', () => {
  it('is filled in, refuses a bad handle in place, saves, and names the seller on the next invoice', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner, { name: 'Browser book' });
    const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Main bank (EUR)', currency: 'EUR' });
    const { page, problems } = await signedInPage(owner);
    await page.goto(`${base}/app/books/${spaceId}/settings`);
    page.setDefaultTimeout(10_000);
    await page.fill('#field-legal_name', 'Nordlicht Studio GmbH');
    await page.fill('#field-trading_name', 'Nordlicht');
    await page.fill('#field-address\\.line1', 'Hafenstraße 12');
    await page.fill('#field-address\\.postal_code', '20457');
    await page.fill('#field-address\\.city', 'Hamburg');
    await page.selectOption('#field-address\\.country', 'DE');
    await page.fill('#field-vat_id', 'DE123456789');
    await page.fill('#field-email', 'billing@nordlicht.example');
    await page.fill('#field-payment_terms_days', '30');
    await page.fill('#field-invoice_footer', 'Thank you for your business.');
    await page.fill('#field-public_handle', 'Not A Slug');
    await page.getByRole('button', { name: 'Save the profile' }).click();
    await page.locator('#field-public_handle-error').waitFor({ timeout: 10_000 });
    expect(await page.inputValue('#field-trading_name')).toBe('Nordlicht');
    expect(await page.getAttribute('#field-public_handle', 'aria-invalid')).toBe('true');
    await shoot(page, 'app-settings-profile-refused');

    const handle = `nordlicht-${spaceId.slice(0, 6)}`;
    await page.fill('#field-public_handle', handle);
    await page.getByRole('button', { name: 'Save the profile' }).click();
    await page.waitForURL(/\/settings$/);
    expect(await page.inputValue('#field-public_handle')).toBe(handle);
    expect(await page.inputValue('#field-address\\.country')).toBe('DE');
    expect(await page.inputValue('#field-payment_terms_days')).toBe('30');
    expect(await page.locator('#profile strong').first().textContent()).toBe('Nordlicht');
    await shoot(page, 'app-settings-profile');

    const res = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/invoices`,
      session: owner.token,
      payload: {
        account_id: account.id,
        client_name: 'Acme GmbH',
        due_on: '2099-06-30',
        line_items: [{ description: 'Design', unit_price: '800' }],
      },
    });
    const sent = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/invoices/${res.json().id}/send`,
      session: owner.token,
      payload: { via: 'none' },
    });
    expect(sent.json()).toMatchObject({ seller_name: 'Nordlicht', seller_tax_id: 'DE123456789' });
    // The refused post answered 422, which Chromium logs as a failed resource; nothing else.
    expect(problems.filter((problem) => !/status of 422/.test(problem))).toEqual([]);
  });
});
