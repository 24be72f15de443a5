import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { getAddress } from 'viem';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { recordGasBalances } from '../../src/features/gas-wallets/index.ts';
import type { Harness } from '../harness.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// Home as a new seller meets it in Chromium: signing up and creating a book lands on Home with
// the first-steps checklist; a payment marked paid shows in Money in and its chart; on a 390 px
// phone the navigation folds behind the Menu button and list tables read as stacked cards.

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

async function shoot(page: Page, name: string) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  await page.screenshot({ path: `${RESULTS_DIR}${name}.png`, fullPage: true });
}

describe('Home in a browser', () => {
  it('lands a new book on Home, ticks the checklist, charts money in, and folds the menu on a phone', async () => {
    const context = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await page.goto(`${base}/app/signup`);
      await page.getByLabel('Your name').fill('Lena Stand');
      await page.getByLabel('Email').fill(`lena-${Date.now()}@example.com`);
      await page.getByLabel('Password').fill('a long enough password');
      await page.getByRole('button', { name: 'Sign up' }).click();
      await page.waitForURL(/\/app\/books$/);
      await page.getByLabel('Name', { exact: true }).fill('Lemonade');
      await page.getByLabel('Base currency').fill('USD');
      await page.getByRole('button', { name: 'Create the book' }).click();
      await page.waitForURL(/\/app\/books\/[0-9a-f-]{36}$/);
      const bookId = /\/app\/books\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
      await page.getByRole('heading', { name: 'First steps' }).waitFor();
      expect(await page.locator('[data-step].done').count()).toBe(0);
      expect(await page.getByRole('link', { name: 'Home' }).getAttribute('aria-current')).toBe('page');
      await shoot(page, 'home-new-book');

      // An account, a key and a request paid by bank transfer: three steps tick, money comes in.
      const owner = await h.db
        .selectFrom('members')
        .innerJoin('users', 'users.id', 'members.user_id')
        .select(['users.id'])
        .where('members.space_id', '=', bookId)
        .executeTakeFirstOrThrow();
      const bank = await h.makeAccount(bookId, { name: 'Operating', currency: 'USD' });
      const cookies = await context.cookies();
      const session = cookies.find((cookie) => cookie.name === 'tb_session')!.value;
      const key = await h.issueKey(
        { id: owner.id, email: '', password: '', token: session, csrf: '' },
        bookId,
      );
      const minted = await h.inject({
        method: 'POST',
        url: '/integration/payment-requests',
        key: key.key,
        payload: { account_id: bank.id, amount: '1234.5', memo: 'Lemonade for the fair' },
      });
      expect(minted.statusCode, minted.body).toBe(201);
      const marked = await h.inject({
        method: 'POST',
        url: `/app/api/spaces/${bookId}/payment-requests/${minted.json().token}/mark-paid`,
        session,
        payload: { amount: '1234.5', reference: 'bank ref' },
      });
      expect(marked.statusCode, marked.body).toBe(200);
      await page.reload();
      expect(await page.locator('[data-step].done').count()).toBe(3);
      expect((await page.locator('[data-window="1"]').textContent())?.trim()).toBe('1,234.50 USD');
      expect(await page.locator('svg.chart rect').count()).toBe(30);
      expect(await page.locator('.income-chart table caption').textContent()).toBe('Money in per day in USD');
      // The table is for screen readers: in the page, one pixel wide on screen.
      expect((await page.locator('.income-chart .visually-hidden').boundingBox())?.width).toBeLessThanOrEqual(
        1,
      );
      await shoot(page, 'home');

      // A phone: the navigation hides behind Menu until it is opened.
      await page.setViewportSize({ width: 390, height: 844 });
      expect(await page.locator('.sidenav').isVisible()).toBe(false);
      await shoot(page, 'home-phone');
      await page.getByText('Menu', { exact: true }).click();
      await page.locator('.sidenav').waitFor({ state: 'visible' });
      await shoot(page, 'home-phone-menu');
      await page.locator('.sidenav').getByRole('link', { name: 'Payment requests' }).click();
      await page.waitForURL(/\/payment-requests$/);
      expect(await page.locator('.sidenav').isVisible()).toBe(false);
      // The list reads as a card per row, each value under its column's name.
      const cell = page.locator('.table-wrap td[data-label="Status"]').first();
      expect(await cell.evaluate((element) => getComputedStyle(element, '::before').content)).toBe(
        '"Status"',
      );
      expect((await page.locator('.table-wrap thead').boundingBox())?.height).toBeLessThanOrEqual(1);
      await shoot(page, 'payment-requests-phone-cards');

      // Hidden for good: the checklist does not come back.
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(`${base}/app/books/${bookId}`);
      await page.getByRole('button', { name: 'Hide this list' }).click();
      await page.getByRole('heading', { name: 'Money in' }).waitFor();
      await page.reload();
      expect(await page.getByRole('heading', { name: 'First steps' }).count()).toBe(0);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('warns on Home while a gas wallet is low, naming the network and the balance in its coin', async () => {
    const lane = getAddress('0x00000000000000000000000000000000006a5101');
    const gas = { db: h.db, clock: h.deps.clock, lowWei: 10n ** 16n };
    const reading = (wei: bigint) => [{ network: 'base' as const, caip2: 'eip155:8453', address: lane, wei }];
    const owner = await h.signup('Owner');
    const bookId = await h.createSpace(owner, { name: 'Nordlicht' });
    const context = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      await recordGasBalances(gas, reading(1_200_000_000_000_000n));
      await context.addCookies([{ name: 'tb_session', value: owner.token, url: base }]);
      const page = await context.newPage();
      await page.goto(`${base}/app/books/${bookId}`);
      const warning = page.getByText(`Gas wallet ${lane.toLowerCase()} on Base is low`);
      await warning.waitFor();
      expect(await warning.textContent()).toContain('0.0012 ETH');
      expect(await page.locator('main').textContent()).not.toContain('eip155:8453');
      await shoot(page, 'home-gas-low');
      await page.setViewportSize({ width: 390, height: 844 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await shoot(page, 'home-gas-low-phone');
    } finally {
      // Topped up again: other books' Homes stop warning.
      await recordGasBalances(gas, reading(10n ** 18n));
      await context.close();
    }
  }, 60_000);
});
