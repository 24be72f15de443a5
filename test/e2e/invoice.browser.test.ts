import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from '../harness.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// The public invoice page as the client meets it: read the invoice, press Pay, pay by card on the
// payment page, and the invoice is paid.

let h: Harness;
let browser: Browser | undefined;
let base: string;

describe('the public invoice page in a browser', () => {
  let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
  beforeAll(async () => {
    if (!chromiumInstalled) return;
    app = await startBrowserApp();
    ({ browser, h, base } = app);
  });
  afterAll(() => app?.close());
  beforeEach(({ skip }) => requireChromium(skip));

  it('shows the invoice, opens its payment page from the Pay button, and is paid by card', async () => {
    const { key } = await h.world({ scopes: ['invoices'] });
    const account = await h.makeAccount(key.spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
    const created = await h.inject({
      method: 'POST',
      url: '/integration/invoices',
      key: key.key,
      payload: {
        account_id: account.id,
        client_name: 'Acme GmbH',
        due_on: '2027-12-31',
        line_items: [{ description: 'Design work', unit_price: '150', quantity: '1' }],
      },
    });
    const invoice = created.json();
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/send`,
      key: key.key,
      payload: { via: 'none' },
    });
    const token = String(invoice.url).split('/i/')[1];
    const page = await browser!.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    try {
      await page.goto(`${base}/i/${token}`, { waitUntil: 'load' });
      expect(await page.textContent('h1')).toBe(`Invoice ${invoice.number}`);
      expect(await page.textContent('#invoice-open')).toContain('150.00 USD');
      await Promise.all([page.waitForURL(/\/pay\/pr_/), page.click('#pay-invoice')]);
      expect(await page.textContent('body')).toContain(`Invoice ${invoice.number}`);
      await page.fill('#card-number', '4242 4242 4242 4242');
      await page.fill('#card-exp', '12/34');
      await page.fill('#card-cvc', '123');
      await page.click('#card-form button[type="submit"]');
      const deadline = Date.now() + 10_000;
      let result = '';
      while (Date.now() < deadline) {
        result = ((await page.textContent('#card-result')) ?? '').trim();
        if (result !== '' && result !== 'Paying…') break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(result.toLowerCase()).toContain('paid');
      await page.goto(`${base}/i/${token}`, { waitUntil: 'load' });
      expect(await page.textContent('#invoice-status')).toBe('Paid');
      expect(await page.$('#pay-invoice')).toBeNull();
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
    const after = await h.inject({ method: 'GET', url: `/integration/invoices/${invoice.id}`, key: key.key });
    expect(after.json()).toMatchObject({ status: 'paid', paid_amount: '150.00000000' });
  });
});
