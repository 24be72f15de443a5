import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from '../harness.ts';
import { type StripeServer, startStripeServer, stripeEnv } from '../stripe-server.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// "Pay by card" as a person meets it with Stripe configured: the button on the pay page and on the
// invoice page leads the browser to the Checkout Session's page (served by the local
// Stripe-shaped server), and once Stripe reports the payment the pay page says paid.

const SHOTS = process.env.SCREENSHOT_DIR;

let h: Harness;
let browser: Browser | undefined;
let base: string;
let stripe: StripeServer;

function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  return problems;
}

describe('Pay by card (Stripe Checkout) in a browser', () => {
  let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
  beforeAll(async () => {
    if (!chromiumInstalled) return;
    stripe = await startStripeServer();
    app = await startBrowserApp({ env: stripeEnv(stripe) });
    ({ browser, h, base } = app);
  });
  afterAll(async () => {
    await app?.close();
    await stripe?.close();
  });
  beforeEach(({ skip }) => requireChromium(skip));

  it('shows the card button on the pay page; it leads to the session, and the paid event shows paid', async () => {
    const { key } = await h.world({ scopes: ['payments'] });
    const account = await h.makeAccount(key.spaceId, {
      kind: 'bank',
      name: 'Main bank',
      currency: 'USD',
      details: 'IBAN DE00 1234 5678 9012 3456 78',
    });
    const minted = await h.inject({
      method: 'POST',
      url: '/integration/payment-requests',
      key: key.key,
      payload: { account_id: account.id, amount: '49.90', memo: 'Pro plan, one month' },
    });
    const { token } = minted.json() as { token: string };
    const page = await browser!.newPage();
    const problems = watchProblems(page);
    try {
      await page.goto(`${base}/pay/${token}`, { waitUntil: 'load' });
      expect(await page.isVisible('#pay-by-card')).toBe(true);
      expect(await page.isVisible('#card-form')).toBe(false);
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/pay-page-card.png`, fullPage: true });
      await Promise.all([page.waitForURL(`${stripe.url}/c/pay/**`), page.click('#pay-by-card')]);
      const sessionId = page.url().split('/c/pay/')[1]!;
      expect(await page.textContent('#checkout')).toBe(`Checkout ${sessionId}`);
      expect(await page.textContent('#total')).toBe('4990 usd');
      // The payer completes Checkout and is sent back before Stripe's webhook has arrived.
      const { event } = stripe.pay(sessionId);
      await page.goto(`${base}/pay/${token}?card=returned`, { waitUntil: 'load' });
      expect(await page.textContent('#card-confirming')).toContain('Stripe is confirming your card payment');
      expect(await page.isVisible('#pay-by-card')).toBe(false);
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/pay-page-returned.png`, fullPage: true });
      const delivered = await h.inject({
        method: 'POST',
        url: '/stripe/webhook',
        headers: { 'content-type': 'application/json', 'stripe-signature': event.signature },
        payload: event.payload,
      });
      expect(delivered.json()).toMatchObject({ outcome: 'settled' });
      await page.reload({ waitUntil: 'load' });
      expect(await page.getAttribute('#status', 'data-status')).toBe('paid');
      expect(await page.textContent('#status')).toBe('Paid');
      expect(await page.isVisible('#pay-by-card')).toBe(false);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('offers Pay by card on the invoice page, which leads to a session for the open amount', async () => {
    const { key } = await h.world({ scopes: ['invoices'] });
    const account = await h.makeAccount(key.spaceId, { kind: 'bank', name: 'Bank', currency: 'EUR' });
    const created = await h.inject({
      method: 'POST',
      url: '/integration/invoices',
      key: key.key,
      payload: {
        account_id: account.id,
        client_name: 'Acme GmbH',
        currency: 'EUR',
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
    const page = await browser!.newPage();
    const problems = watchProblems(page);
    try {
      await page.goto(`${base}/i/${String(invoice.url).split('/i/')[1]}`, { waitUntil: 'load' });
      expect(await page.isVisible('#pay-invoice')).toBe(true);
      expect(await page.isVisible('#pay-invoice-card')).toBe(true);
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/invoice-page-card.png`, fullPage: true });
      await Promise.all([page.waitForURL(`${stripe.url}/c/pay/**`), page.click('#pay-invoice-card')]);
      expect(await page.textContent('#total')).toBe('15000 eur');
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
