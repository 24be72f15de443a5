import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from '../harness.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// A contact edited in Chromium (a refused IBAN in place, then a saved change in the history),
// and a book in Asia/Tokyo writing ja-JP: Book settings and the Invoices list. Each screen is
// shot at 1280 and 390 pixels wide into test-results/.

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));

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

async function pageAs(token: string): Promise<{ page: Page; problems: string[] }> {
  const context = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addCookies([{ name: 'tb_session', value: token, url: base }]);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
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

describe('Edit a contact in a browser', () => {
  it('refuses a mistyped IBAN beside its field, then saves a change that the history lists', async () => {
    const owner = await h.signup('Olivia Owner');
    const spaceId = await h.createSpace(owner, { base_currency: 'EUR' });
    const made = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/contacts`,
      session: owner.token,
      payload: {
        name: 'Globex Ltd',
        kind: 'company',
        email: 'ap@globex.test',
        country: 'GB',
        addresses: [
          {
            label: 'Main',
            requisites: { scheme: 'sepa', iban: 'DE89370400440532013000', holder: 'Globex Ltd' },
          },
        ],
      },
    });
    const { page, problems } = await pageAs(owner.token);
    await page.goto(`${base}/app/books/${spaceId}/contacts`);
    await page.getByRole('link', { name: 'Globex Ltd' }).click();
    await page.getByRole('button', { name: 'Save the contact' }).waitFor();
    await shoot(page, 'contact-page');
    await page.getByLabel('IBAN').fill('DE89 3704 0044 0532 0130 01');
    await page.getByRole('button', { name: 'Save the contact' }).click();
    await page.locator('#field-addresses\\.0\\.requisites\\.iban-error').waitFor();
    await expect(
      page.locator('#field-addresses\\.0\\.requisites\\.iban-error').textContent(),
    ).resolves.toContain('mod-97');
    await shoot(page, 'contact-edit-error');
    await page.getByLabel('IBAN').fill('GB82 WEST 1234 5698 7654 32');
    await page.getByLabel('Phone').fill('+44 20 7946 0000');
    await page.getByRole('button', { name: 'Save the contact' }).click();
    await page.getByText('Phone: (none) → +44 20 7946 0000').waitFor();
    await shoot(page, 'contact-edited');
    const read = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${spaceId}/contacts/${made.json().id}`,
      session: owner.token,
    });
    expect(read.json().addresses[0].requisites.iban).toBe('GB82WEST12345698765432');
    // The refused form's answer is a 422 the browser reports; nothing else went wrong.
    expect(problems.filter((problem) => !problem.includes('status of 422'))).toEqual([]);
  });
});

describe('A book in Asia/Tokyo writing ja-JP, in a browser', () => {
  it('shows Book settings and the Invoices list with Tokyo dates and JPY without decimals', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner, {
      base_currency: 'JPY',
      time_zone: 'Asia/Tokyo',
      locale: 'ja-JP',
    });
    const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Bank', currency: 'JPY' });
    await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/invoices`,
      session: owner.token,
      payload: {
        account_id: account.id,
        client_name: 'Tanaka KK',
        due_on: '2099-06-30',
        line_items: [{ description: 'Design', unit_price: '123456', quantity: '1' }],
      },
    });
    const { page, problems } = await pageAs(owner.token);
    await page.goto(`${base}/app/books/${spaceId}/settings`);
    await expect(page.locator('#format-sample').textContent()).resolves.toContain('2026/03/02 3:30');
    await shoot(page, 'book-settings-format');
    await page.goto(`${base}/app/books/${spaceId}/invoices`);
    const main = (await page.locator('main').textContent()) ?? '';
    expect(main).toContain('2099/06/30');
    expect(main).toContain('123,456 JPY');
    await shoot(page, 'invoices-tokyo');
    expect(problems).toEqual([]);
  });
});
