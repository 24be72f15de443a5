import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from '../harness.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// The invoice page's Download menu in Chromium: it opens under its summary at desktop and phone
// width, offers the PDF and the three e-invoices, and a click downloads the file.

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

async function shoot(page: Page, name: string) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  await page.screenshot({ path: `${RESULTS_DIR}${name}.png`, fullPage: true });
  const desktop = page.viewportSize();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${RESULTS_DIR}${name}-phone.png`, fullPage: true });
  if (desktop) await page.setViewportSize(desktop);
}

describe('the Download menu of an invoice', () => {
  it('opens with PDF, Factur-X, UBL and CII, and downloads the UBL e-invoice', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner, { name: 'Menu book' });
    const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Bank', currency: 'EUR' });
    const profile = await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${spaceId}/profile`,
      session: owner.token,
      payload: {
        legal_name: 'Nordlicht Studio GmbH',
        address: { line1: 'Hafenstraße 12', postal_code: '20457', city: 'Hamburg', country: 'DE' },
        vat_id: 'DE123456789',
        email: 'billing@nordlicht.example',
      },
    });
    expect(profile.statusCode, profile.body).toBe(200);
    const created = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/invoices`,
      session: owner.token,
      payload: {
        account_id: account.id,
        client_name: 'Acme SARL',
        client_email: 'ap@acme.example',
        client_country_code: 'FR',
        due_on: '2099-06-30',
        line_items: [
          { description: 'Design', unit_price: '800', quantity: '3', tax_kind: 'standard', tax_rate: '19' },
        ],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const invoice = created.json() as { id: string; number: string };
    const context = await app!.browser.newContext({
      viewport: { width: 1280, height: 900 },
      acceptDownloads: true,
    });
    await context.addCookies([{ name: 'tb_session', value: owner.token, url: base }]);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    try {
      await page.goto(`${base}/app/books/${spaceId}/invoices/${invoice.id}`);
      const menu = page.locator('details.menu');
      await menu.locator('summary').click();
      await expect.poll(() => menu.getAttribute('open')).not.toBeNull();
      expect(await menu.locator('a').allTextContents()).toEqual([
        'PDF',
        'Factur-X (PDF with CII)',
        'UBL (Peppol BIS)',
        'CII (XML)',
      ]);
      await shoot(page, 'einvoice-download-menu');
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        menu.getByRole('link', { name: 'UBL (Peppol BIS)' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe(`invoice-${invoice.number}.ubl.xml`);
      const path = await download.path();
      expect(readFileSync(path, 'utf8')).toContain(`<cbc:ID>${invoice.number}</cbc:ID>`);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
