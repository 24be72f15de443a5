import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { type ParsedMail, simpleParser } from 'mailparser';
import type { BrowserContext, Page } from 'playwright-core';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { invoiceMailAttachments } from '../../src/features/invoices/index.ts';
import { mailerFromConfig } from '../../src/platform/mail/mailer.ts';
import { drainMailOutbox } from '../../src/platform/mail/outbox.ts';
import type { Harness, User } from '../harness.ts';
import { holdMailOutbox } from '../support/turns.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

holdMailOutbox();

// The Invoices screens as a seller meets them in Chromium, with mail going to a real SMTP server
// on loopback: an invoice written in the app, sent by email, paid in two payments (one refused in
// place), another voided, and a quote for a picked contact accepted into an invoice. A client and
// a line named like a script stay text, and no dialog but the confirmations ever opens.

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));
const XSS = '<script>alert(1)</script>';

let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
let h: Harness;
let base: string;
let smtp: SMTPServer | undefined;
const received: ParsedMail[] = [];

beforeAll(async () => {
  if (!chromiumInstalled) return;
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((mail) => {
          received.push(mail);
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => smtp!.listen(0, '127.0.0.1', resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  app = await startBrowserApp({
    env: {
      RATE_LIMIT_PER_MINUTE: '100000',
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      MAIL_FROM: 'Billing <b@tollbook.test>',
    },
  });
  ({ h, base } = app);
});
afterAll(async () => {
  await app?.close();
  if (smtp) await new Promise<void>((resolve) => smtp!.close(() => resolve()));
});
beforeEach(({ skip }) => requireChromium(skip));

async function signedIn(user: User): Promise<BrowserContext> {
  const context = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addCookies([{ name: 'tb_session', value: user.token, url: base }]);
  return context;
}

/** A page that records script errors and accepts only the confirmations the app asks for. */
async function watchedPage(context: BrowserContext) {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('dialog', (dialog) => {
    if (dialog.type() !== 'confirm') problems.push(`unexpected ${dialog.type()}: ${dialog.message()}`);
    void dialog.accept();
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

async function book() {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner);
  await h.makeAccount(spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
  return { owner, spaceId };
}

describe('Invoices in a browser', () => {
  it('writes an invoice in the app, sends it by email, records a payment (one refused in place) and sees it paid', async () => {
    const { owner, spaceId } = await book();
    const context = await signedIn(owner);
    const { page, problems } = await watchedPage(context);
    try {
      await page.goto(`${base}/app/books/${spaceId}/invoices`);
      expect(await page.locator('.empty > strong').textContent()).toBe(
        'No invoices, quotes or credit notes yet',
      );
      await page.getByRole('link', { name: 'New invoice' }).click();
      await waitForText(page, 'h1', /^New invoice$/);
      await page.fill('#field-client_name', XSS);
      await page.fill('#field-client_email', 'ap@acme.test');
      await page.fill('#field-due_on', '2099-06-30');
      await page.fill('#field-seller\\.name', 'Seller Ltd');
      await page.fill('#field-line_items\\.0\\.description', XSS);
      await page.fill('#field-line_items\\.0\\.quantity', '2');
      await page.fill('#field-line_items\\.0\\.unit_price', '100');
      await page.getByRole('button', { name: 'Add a line' }).click();
      await page.locator('#field-line_items\\.3\\.description').waitFor();
      expect(await page.inputValue('#field-line_items\\.0\\.description')).toBe(XSS);
      await page.fill('#field-line_items\\.3\\.description', 'Hosting');
      await page.fill('#field-line_items\\.3\\.unit_price', '9.99');
      await shoot(page, 'app-invoice-new');
      await page.getByRole('button', { name: 'Create the invoice' }).click();
      await waitForText(page, '.notice.ok', /Created/);
      expect(page.url()).toMatch(/\/invoices\/[0-9a-f-]{36}\?done=created$/);
      // The line named like a script is a line's text, not a script.
      expect(await page.locator('table tbody tr').first().locator('td').first().textContent()).toBe(XSS);
      expect(await page.textContent('[data-field="total"]')).toBe('209.99 USD');

      await page.locator('[data-action="send"]').getByRole('button', { name: 'Send' }).click();
      await waitForText(page, '.notice.ok', /^Sent by email\.$/);
      expect(await page.locator('h1 .pill').textContent()).toBe('Sent');
      // The mail leaves after commit: one round of the mail worker sends it.
      const mailer = mailerFromConfig(h.deps.config);
      await drainMailOutbox({
        db: h.db,
        clock: h.deps.clock,
        mailer,
        attachmentsFor: ({ spaceId, invoiceId }) =>
          invoiceMailAttachments(h.db, h.deps.config.publicUrl, spaceId, invoiceId),
      });
      mailer.close();
      expect(received.at(-1)?.subject).toMatch(/^Invoice INV-\d+ from Seller Ltd$/);
      expect(received.at(-1)?.attachments[0]?.contentType).toBe('application/pdf');

      await page.fill('#payments-amount', '500');
      await page.locator('[data-action="payments"] button[type="submit"]').click();
      await waitForText(page, '[data-action="payments"] .notice.error', /larger than the amount still open/);
      expect(await page.inputValue('#payments-amount')).toBe('500');
      await shoot(page, 'app-invoice-refused');
      await page.fill('#payments-amount', '100');
      await page.fill('#payments-note', 'First half');
      await page.locator('[data-action="payments"] button[type="submit"]').click();
      await waitForText(page, '.notice.ok', /^Payment recorded\.$/);
      expect(await page.locator('h1 .pill').textContent()).toBe('Partly paid');
      await page.fill('#payments-amount', '109.99');
      await page.locator('[data-action="payments"] button[type="submit"]').click();
      await waitForText(page, 'h1 .pill', /^Paid$/);
      expect(await page.textContent('[data-field="open"]')).toBe('0.00 USD');
      expect(await page.locator('[data-action="payments"]').count()).toBe(0);
      await shoot(page, 'app-invoice-detail');

      await page.getByRole('link', { name: '← Invoices' }).click();
      await waitForText(page, 'h1', /^Invoices$/);
      const row = page.locator('.table-wrap tbody tr').first();
      expect(await row.locator('td').nth(3).textContent()).toBe(XSS);
      expect(await row.locator('.pill').textContent()).toBe('Paid');
      expect((await row.textContent())?.replace(/\s+/g, ' ')).toContain('209.99 USD');
      // Dates carry their UTC time on hover; the server writes them in the book's zone and locale.
      expect(await row.locator('time').first().getAttribute('title')).toMatch(/ UTC$/);
      await shoot(page, 'app-invoices');
      // The refused payment answered 422 on purpose; Chromium logs every 4xx answer.
      expect(problems).toEqual([
        'Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)',
      ]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('voids an invoice from its page after the confirmation', async () => {
    const { owner, spaceId } = await book();
    const created = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/invoices`,
      session: owner.token,
      payload: {
        account_id: (
          await h.db
            .selectFrom('accounts')
            .select('id')
            .where('space_id', '=', spaceId)
            .executeTakeFirstOrThrow()
        ).id,
        client_name: 'Initech',
        due_on: '2099-01-31',
        line_items: [{ description: 'Support', unit_price: '40' }],
      },
    });
    const context = await signedIn(owner);
    const { page, problems } = await watchedPage(context);
    try {
      await page.goto(`${base}/app/books/${spaceId}/invoices/${created.json().id}`);
      await page.fill('#void-reason', 'Sent to the wrong client');
      await page.getByRole('button', { name: 'Void' }).click();
      await waitForText(page, '.notice.ok', /^Voided\./);
      expect(await page.locator('h1 .pill').textContent()).toBe('Void');
      expect(await page.textContent('main')).toContain('Voided: Sent to the wrong client');
      expect(await page.locator('form[method="post"][action*="/invoices/"]').count()).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('writes a quote for a picked contact, marks it sent, accepts it and opens the invoice made from it', async () => {
    const { owner, spaceId } = await book();
    const contact = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/contacts`,
      session: owner.token,
      payload: { name: XSS, email: 'buyer@example.com' },
    });
    expect(contact.statusCode).toBe(201);
    const context = await signedIn(owner);
    const { page, problems } = await watchedPage(context);
    try {
      await page.goto(`${base}/app/books/${spaceId}/invoices/new?kind=quote`);
      await page.selectOption('#field-contact_id', contact.json().id);
      await page.fill('#field-due_on', '2099-12-31');
      await page.fill('#field-line_items\\.0\\.description', 'Website');
      await page.fill('#field-line_items\\.0\\.unit_price', '1500');
      await page.getByRole('button', { name: 'Create the quote' }).click();
      await waitForText(page, '.notice.ok', /Created/);
      expect(await page.locator('h1').textContent()).toMatch(/^Quote QUO-\d+/);
      expect(await page.locator('dl.figures dd').first().textContent()).toBe(`${XSS} buyer@example.com`);
      await page.selectOption('#send-via', 'none');
      await page.locator('[data-action="send"] button[type="submit"]').click();
      await waitForText(page, '.notice.ok', /^Marked as sent/);
      await page.getByRole('button', { name: 'Accept' }).click();
      await waitForText(page, '.notice.ok', /^Accepted/);
      expect(await page.locator('h1 .pill').textContent()).toBe('Accepted');
      await page.locator('[data-field="became"] a').click();
      await waitForText(page, 'h1', /^Invoice INV-\d+ Draft$/);
      expect(await page.textContent('[data-field="total"]')).toBe('1,500.00 USD');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
