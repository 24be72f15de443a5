import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness, User } from '../harness.ts';
import { testPng } from '../support/images.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// Documents people work with, in Chromium: a draft changed on its edit form, a credit note made
// from an invoice's page and sent by email, and a quote the client accepts on its public page (with the book's
// logo), at desktop width and at 390 px.

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));

let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
let h: Harness;
let base: string;

beforeAll(async () => {
  if (!chromiumInstalled) return;
  // Mail is configured so that a credit note can be sent; no worker runs here, so it stays queued.
  app = await startBrowserApp({ env: { RATE_LIMIT_PER_MINUTE: '100000', SMTP_URL: 'smtp://127.0.0.1:9' } });
  ({ h, base } = app);
});
afterAll(async () => {
  await app?.close();
});
beforeEach(({ skip }) => requireChromium(skip));

async function watchedPage(context: BrowserContext) {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('dialog', (dialog) => {
    problems.push(`unexpected ${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return { page, problems };
}

async function shoot(page: Page, name: string) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  await page.screenshot({ path: `${RESULTS_DIR}${name}.png`, fullPage: true });
  const desktop = page.viewportSize();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${RESULTS_DIR}${name}-phone.png`, fullPage: true });
  // At 390 px nothing is wider than the screen.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow, `${name} is wider than 390 px`).toBeLessThanOrEqual(0);
  if (desktop) await page.setViewportSize(desktop);
}

/** Waits until the element reads as wanted: boosted pages swap their content after the address moves. */
async function waitForText(page: Page, selector: string, wanted: RegExp, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  let current = '';
  while (Date.now() < deadline) {
    const found = page.locator(selector).first();
    current =
      (await found.count()) > 0 ? ((await found.textContent()) ?? '').replace(/\s+/g, ' ').trim() : '';
    if (wanted.test(current)) return current;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${selector} read "${current}", not ${wanted}, after ${timeoutMs} ms.`);
}

async function text(page: Page, selector: string) {
  return ((await page.locator(selector).first().textContent()) ?? '').replace(/\s+/g, ' ').trim();
}

async function book() {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner);
  const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Bank', currency: 'EUR' });
  return { owner, spaceId, accountId: account.id };
}

async function signedIn(user: User): Promise<BrowserContext> {
  const context = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addCookies([{ name: 'tb_session', value: user.token, url: base }]);
  return context;
}

async function create(owner: User, spaceId: string, payload: Record<string, unknown>) {
  const res = await h.inject({
    method: 'POST',
    url: `/app/api/spaces/${spaceId}/invoices`,
    session: owner.token,
    payload,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

describe('documents in a browser', () => {
  it('changes a draft on its edit form: the totals follow, and a sent invoice has no edit form', async () => {
    const { owner, spaceId, accountId } = await book();
    const invoice = await create(owner, spaceId, {
      account_id: accountId,
      client_name: 'Acme GmbH',
      due_on: '2099-06-30',
      line_items: [{ description: 'Design', unit_price: '100', quantity: '2' }],
    });
    const context = await signedIn(owner);
    const { page, problems } = await watchedPage(context);
    try {
      await page.goto(`${base}/app/books/${spaceId}/invoices/${invoice.id}`);
      await page.getByRole('link', { name: 'Edit', exact: true }).click();
      await waitForText(page, 'h1', /^Edit invoice INV-\d{6}$/);
      expect(await page.inputValue('#field-client_name')).toBe('Acme GmbH');
      await page.fill('#field-client_name', 'Initech');
      await page.fill('#field-line_items\\.0\\.quantity', '3');
      await page.fill('#field-line_items\\.1\\.description', 'Hosting');
      await page.fill('#field-line_items\\.1\\.unit_price', '20');
      await page.fill('#field-notes', 'Thank you for your business.');
      await shoot(page, 'documents-draft-edit');
      await page.getByRole('button', { name: 'Save the changes' }).click();
      await waitForText(page, '.notice.ok', /^Saved/);
      expect(page.url()).toMatch(/\?done=saved$/);
      expect(await text(page, '[data-field="total"]')).toBe('320.00 EUR');
      expect(await text(page, 'dl.figures dd')).toBe('Initech');
      await shoot(page, 'documents-draft-saved');
      await page.selectOption('#send-via', 'none');
      await page.locator('[data-action="send"] button[type="submit"]').click();
      await waitForText(page, '.notice.ok', /^Marked as sent/);
      expect(await page.locator('[data-action="edit"]').count()).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('makes a credit note from an invoice page, prefilled, that corrects it, lowers what is open and is mailed', async () => {
    const { owner, spaceId, accountId } = await book();
    const invoice = await create(owner, spaceId, {
      account_id: accountId,
      client_name: 'Acme GmbH',
      client_email: 'ap@acme.test',
      due_on: '2099-06-30',
      line_items: [
        { description: 'Design', unit_price: '100', quantity: '2' },
        { description: 'Hosting', unit_price: '50' },
      ],
    });
    await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/invoices/${invoice.id}/send`,
      session: owner.token,
      payload: { via: 'none' },
    });
    const context = await signedIn(owner);
    const { page, problems } = await watchedPage(context);
    try {
      await page.goto(`${base}/app/books/${spaceId}/invoices/${invoice.id}`);
      await page.getByRole('link', { name: 'Create credit note' }).click();
      await waitForText(page, 'h1', /^New credit note$/);
      expect(await page.inputValue('#field-client_name')).toBe('Acme GmbH');
      expect(await page.inputValue('#field-line_items\\.1\\.description')).toBe('Hosting');
      expect(await page.locator('#field-due_on').count()).toBe(0);
      // Only the hosting is credited: the design line is cleared.
      await page.fill('#field-line_items\\.0\\.description', '');
      await page.fill('#field-line_items\\.0\\.quantity', '');
      await page.fill('#field-line_items\\.0\\.unit_price', '');
      await shoot(page, 'documents-credit-note-new');
      await page.getByRole('button', { name: 'Create the credit note' }).click();
      await waitForText(page, 'h1', /^Credit note CN-\d{6} Issued$/);
      expect(await text(page, '.notice.ok')).toMatch(/^Issued\. Its total is taken off/);
      expect(await text(page, '[data-field="corrects"]')).toBe(invoice.number);
      expect(await text(page, '[data-field="total"]')).toBe('50.00 EUR');
      await shoot(page, 'documents-credit-note');
      // Sent by email to the corrected invoice's client; it stays issued.
      await page.getByRole('button', { name: 'Send by email' }).click();
      await waitForText(page, '.notice.ok', /^Sent by email\./);
      expect(await text(page, 'h1')).toMatch(/^Credit note CN-\d{6} Issued$/);
      const creditId = /\/invoices\/([0-9a-f-]{36})/.exec(page.url())?.[1];
      const deliveries = await h.inject({
        method: 'GET',
        url: `/app/api/spaces/${spaceId}/invoice-deliveries?invoice_id=${creditId}`,
        session: owner.token,
      });
      expect(deliveries.statusCode, deliveries.body).toBe(200);
      expect(deliveries.json().items).toMatchObject([
        { purpose: 'send', via: ['email'], recipient: 'ap@acme.test' },
      ]);
      await shoot(page, 'documents-credit-note-sent');
      await page.locator('[data-field="corrects"] a').click();
      await waitForText(page, 'h1', /^Invoice INV-\d{6} Sent$/);
      expect(await text(page, '[data-field="credited"]')).toBe('50.00 EUR');
      expect(await text(page, '[data-field="open"]')).toBe('200.00 EUR');
      await page.goto(`${base}/i/${invoice.token}`);
      expect(await text(page, '#invoice-open')).toBe('200.00 EUR');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('a client accepts a quote on its public page; the seller sees who, when, and the invoice made from it', async () => {
    const { owner, spaceId, accountId } = await book();
    const logo = await h.inject({
      method: 'PUT',
      url: `/app/api/spaces/${spaceId}/profile/logo`,
      session: owner.token,
      headers: { 'content-type': 'image/png' },
      payload: testPng(900, 300),
    });
    expect(logo.statusCode, logo.body).toBe(200);
    await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${spaceId}/profile`,
      session: owner.token,
      payload: { trading_name: 'Bright Studio' },
    });
    const quote = await create(owner, spaceId, {
      kind: 'quote',
      account_id: accountId,
      client_name: 'Acme GmbH',
      due_on: '2099-06-30',
      line_items: [
        { description: 'Website redesign', unit_price: '1500' },
        { description: 'Hosting, first year', unit_price: '120', tax_kind: 'standard', tax_rate: '19' },
      ],
    });
    await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/invoices/${quote.id}/send`,
      session: owner.token,
      payload: { via: 'none' },
    });
    const client = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const { page, problems } = await watchedPage(client);
    try {
      await page.goto(`${base}/i/${quote.token}`);
      expect(await text(page, 'h1')).toBe(`Quote ${quote.number}`);
      expect(await text(page, '#seller')).toBe('Bright Studio');
      expect(await page.locator('#seller-logo').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(
        512,
      );
      await shoot(page, 'documents-quote-public');
      await page.fill('#quote-name', 'Jane Buyer');
      await page.click('#quote-accept');
      await waitForText(page, '#quote-status', /^Accepted$/);
      expect(await text(page, '#quote-status')).toBe('Accepted');
      expect(await text(page, '#quote-answer')).toMatch(
        // The moment in the book's zone and locale (a new book here: UTC, English).
        /^Accepted by Jane Buyer on [A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}\s[AP]M\. Invoice INV-\d{6} follows\.$/,
      );
      await shoot(page, 'documents-quote-accepted');
      expect(problems).toEqual([]);
    } finally {
      await client.close();
    }
    const seller = await signedIn(owner);
    const { page: app2, problems: sellerProblems } = await watchedPage(seller);
    try {
      await app2.goto(`${base}/app/books/${spaceId}/invoices/${quote.id}`);
      expect(await text(app2, 'h1 .pill')).toBe('Accepted');
      expect(await text(app2, '[data-field="decided"]')).toMatch(/by Jane Buyer$/);
      const invoiceNumber = await text(app2, '[data-field="became"]');
      expect(invoiceNumber).toMatch(/^INV-\d{6}$/);
      await shoot(app2, 'documents-quote-in-app');
      await app2.locator('[data-field="became"] a').click();
      await waitForText(app2, 'h1', new RegExp(`^Invoice ${invoiceNumber} Draft$`));
      expect(await text(app2, '[data-field="from-quote"]')).toBe(quote.number);
      expect(await text(app2, '[data-field="total"]')).toBe('1,642.80 EUR');
      await shoot(app2, 'documents-invoice-from-quote');
      const invoices = await h.inject({
        method: 'GET',
        url: `/app/api/spaces/${spaceId}/invoices?kind=invoice`,
        session: owner.token,
      });
      expect(invoices.json().items).toHaveLength(1);
      expect(sellerProblems).toEqual([]);
    } finally {
      await seller.close();
    }
  }, 90_000);

  it('uploads a logo in Book settings; the pay page shows it', async () => {
    const { owner, spaceId, accountId } = await book();
    const invoice = await create(owner, spaceId, {
      account_id: accountId,
      client_name: 'Acme GmbH',
      due_on: '2099-06-30',
      line_items: [{ description: 'Design', unit_price: '80' }],
    });
    await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/invoices/${invoice.id}/send`,
      session: owner.token,
      payload: { via: 'none' },
    });
    const context = await signedIn(owner);
    const { page, problems } = await watchedPage(context);
    try {
      await page.goto(`${base}/app/books/${spaceId}/settings`);
      expect(await text(page, '#logo')).toContain('No logo yet.');
      await page.setInputFiles('#field-logo', {
        name: 'logo.png',
        mimeType: 'image/png',
        buffer: testPng(1200, 400),
      });
      await page.getByRole('button', { name: 'Upload the logo' }).click();
      await page.waitForSelector('#logo-image');
      expect(await page.locator('#logo-image').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(
        512,
      );
      await shoot(page, 'documents-settings-logo');
      await page.goto(`${base}/i/${invoice.token}`);
      await page.click('#pay-invoice');
      await page.waitForSelector('#amount');
      expect(await page.locator('#seller-logo').evaluate((img: HTMLImageElement) => img.naturalHeight)).toBe(
        171,
      );
      await shoot(page, 'documents-pay-page-logo');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
