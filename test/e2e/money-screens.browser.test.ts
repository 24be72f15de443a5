import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from '../harness.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// The money screens as a seller meets them in Chromium: a request paid with the test card on
// its page, then seen on the Endpoints card, in Income (expanded to its payment and payer) and
// in the Ledger, following the link from the payment to its entry.

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));
const RESOURCE = 'https://api.example.com/v1/forecast';
const EXPIRY = `12/${String((new Date().getUTCFullYear() + 3) % 100).padStart(2, '0')}`;

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

async function signedIn(token: string): Promise<BrowserContext> {
  const context = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addCookies([{ name: 'tb_session', value: token, url: base }]);
  return context;
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
    current = ((await page.locator(selector).first().textContent()) ?? '').replace(/\s+/g, ' ').trim();
    if (wanted.test(current)) return current;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${selector} read "${current}", not ${wanted}, after ${timeoutMs} ms.`);
}

describe('Endpoints, Income and Ledger in a browser', () => {
  it('pays a request with the test card on its page, then shows it on the Endpoints card, in Income with its payer, and in the Ledger', async () => {
    const world = await h.world({ scopes: ['payments'] });
    const wallet = await h.makeWallet(world.spaceId);
    const minted = await h.inject({
      method: 'POST',
      url: '/integration/payment-requests',
      key: world.key.key,
      payload: {
        account_id: wallet.id,
        amount: '2.5',
        currency: 'USD',
        resource: RESOURCE,
        memo: 'Forecast',
      },
    });
    expect(minted.statusCode).toBe(201);
    const context = await signedIn(world.owner.token);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    try {
      // The payer: the pay page and the test card.
      await page.goto(`${base}/pay/${minted.json().token}`);
      await page.fill('#card-number', '4242 4242 4242 4242');
      await page.fill('#card-exp', EXPIRY);
      await page.fill('#card-cvc', '123');
      await page.click('#card-form button[type="submit"]');
      await waitForText(page, '#status', /^Paid$/);

      // The seller: the Endpoints card counts the call and draws today's payer.
      await page.goto(`${base}/app/books/${world.spaceId}/endpoints`);
      const card = page.locator('article.endpoint');
      expect(await card.count()).toBe(1);
      expect(await card.locator('code.address').textContent()).toBe(RESOURCE);
      expect(await card.locator('[data-field="calls"]').textContent()).toBe('1');
      const bars = card.locator('svg.chart rect');
      expect(await bars.count()).toBe(30);
      expect(await bars.last().getAttribute('data-payers')).toBe('1');
      expect(Number(await bars.last().getAttribute('height'))).toBeGreaterThan(0);
      await shoot(page, 'app-endpoints');

      // Income: the day's row for the endpoint; expanding it loads the payment and its payer.
      await card.getByRole('link', { name: 'Income of this endpoint' }).click();
      await page.waitForURL(/\/income\?ref=/);
      const row = page.locator('tbody tr').first();
      expect((await row.textContent())?.replace(/\s+/g, ' ')).toContain('2.50 USD');
      await row.locator('summary').click();
      await waitForText(page, 'tbody tr details .payments', /card ending 4242/);
      await shoot(page, 'app-income');

      // The payment links to its ledger entry: the asset debited, the endpoint's income credited.
      const entryHref = await row.locator('details .payments a', { hasText: 'Entry' }).getAttribute('href');
      expect(entryHref).toMatch(new RegExp(`^/app/books/${world.spaceId}/ledger/[0-9a-f-]{36}$`));
      await page.goto(`${base}${entryHref}`);
      const postings = (await page.locator('table.postings').textContent())?.replace(/\s+/g, ' ') ?? '';
      expect(postings).toContain('Wallet');
      expect(postings).toContain('Income · endpoint');
      expect(postings).toContain('2.50 USD');
      await shoot(page, 'app-ledger-entry');

      // The Ledger filtered by the wallet account lists that entry.
      await page.goto(`${base}/app/books/${world.spaceId}/ledger`);
      await page.selectOption('#field-account_id', wallet.id);
      await page.click('form[aria-label="Filter entries"] button[type="submit"]');
      await page.waitForURL(/account_id=/);
      expect(await page.locator('.table-wrap > table > tbody > tr').count()).toBe(1);
      expect(await page.locator('.table-wrap > table > tbody > tr').first().textContent()).toContain(
        'card ending 4242',
      );
      await shoot(page, 'app-ledger');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('shows a viewer the cards without the Findable switch, and the owner switches it in place', async () => {
    const world = await h.world({ scopes: ['payments'] });
    const bank = await h.makeAccount(world.spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
    const minted = await h.inject({
      method: 'POST',
      url: '/integration/payment-requests',
      key: world.key.key,
      payload: { account_id: bank.id, amount: '3', resource: RESOURCE },
    });
    await h.inject({
      method: 'POST',
      url: `/pay/${minted.json().token}/card`,
      payload: { number: '4242424242424242', exp: EXPIRY, cvc: '123' },
    });
    const viewer = await h.signup('Viewer');
    await h.addMember(world.owner, world.spaceId, viewer, 'viewer');
    const viewing = await signedIn(viewer.token);
    const owning = await signedIn(world.owner.token);
    try {
      const asViewer = await viewing.newPage();
      await asViewer.goto(`${base}/app/books/${world.spaceId}/endpoints`);
      expect(await asViewer.locator('article.endpoint').count()).toBe(1);
      expect(await asViewer.locator('article.endpoint form').count()).toBe(0);

      const asOwner = await owning.newPage();
      await asOwner.goto(`${base}/app/books/${world.spaceId}/endpoints`);
      expect(await asOwner.locator('[data-field="findable"]').textContent()).toBe('No');
      await asOwner.getByRole('button', { name: 'Make findable' }).click();
      await waitForText(asOwner, '[data-field="findable"]', /^Yes$/);
      expect(await asOwner.getByRole('button', { name: 'Make unfindable' }).count()).toBe(1);
    } finally {
      await viewing.close();
      await owning.close();
    }
  });

  it('lists a pushed batch with its counts, opens its rejected rows with their reasons, and undoes it from the app; the ledger keeps both entries', async () => {
    const world = await h.world({ scopes: ['transactions'], push_source: 'erp' });
    const row = (id: string, extra: Record<string, unknown> = {}) => ({
      external_id: id,
      account_key: 'bank-eur',
      currency: 'EUR',
      occurred_on: '2026-03-15',
      amount: '10.25',
      payee: 'Client',
      ...extra,
    });
    const pushed = await h.inject({
      method: 'POST',
      url: '/integration/transactions',
      key: world.key.key,
      payload: {
        rows: [row('a-1'), row('a-2', { amount: '-4' }), row('a-1'), row('a-<b>3</b>', { amount: 'ten' })],
      },
    });
    expect(pushed.statusCode).toBe(200);
    const context = await signedIn(world.owner.token);
    const page = await context.newPage();
    try {
      await page.goto(`${base}/app/books/${world.spaceId}/push`);
      const batch = page.locator('.table-wrap > table > tbody > tr');
      expect(await batch.count()).toBe(1);
      const cells = (await batch.first().locator('td').allTextContents()).map((cell) => cell.trim());
      // Rows, booked, duplicates, skipped (closed), rejected.
      expect(cells.slice(2, 7)).toEqual(['4', '2', '1', '0', '1 — why?']);
      await batch.first().getByRole('link', { name: '1 rejected: see why' }).click();
      await waitForText(page, '#rejections h2', /Rejected rows of the batch/);
      const refused = (await page.locator('#rejections tbody tr td').allTextContents()).map((cell) =>
        cell.trim(),
      );
      expect(refused).toEqual(['3', 'a-<b>3</b>', 'Invalid row', 'amount is not a decimal.']);
      await shoot(page, 'app-push');
      await page.locator('#rejections').getByRole('link', { name: 'Close' }).click();
      await page.locator('#rejections').waitFor({ state: 'detached' });
      page.once('dialog', (dialog) => dialog.accept());
      await batch.first().getByRole('button', { name: 'Undo' }).click();
      await waitForText(page, '.notice.ok', /Batch undone: 2 rows reversed\./);
      expect(await batch.first().getByRole('button', { name: 'Undo' }).count()).toBe(0);
      expect(await batch.first().textContent()).toContain('Undone');
      await shoot(page, 'app-push-undone');
      const entries = await h.inject({
        method: 'GET',
        url: `/app/api/spaces/${world.spaceId}/ledger/entries`,
        session: world.owner.token,
      });
      expect(
        entries.json().items.filter((entry: { reverses_entry_id: string | null }) => entry.reverses_entry_id),
      ).toHaveLength(2);

      // Closing the books answers in place; an earlier date is then refused with its sentence.
      await page.fill('#field-through', '2026-03-31');
      await page.getByRole('button', { name: 'Close the books' }).click();
      await waitForText(page, '.notice.ok', /closed through 2026-03-31/);
      await page.fill('#field-through', '2026-03-01');
      await page.getByRole('button', { name: 'Close the books' }).click();
      await waitForText(page, '.notice.error', /a closed day stays closed/);
    } finally {
      await context.close();
    }
  });
});
