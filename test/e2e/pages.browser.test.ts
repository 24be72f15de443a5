import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from '../harness.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// The public pages as a person meets them: a real Chromium against the real app listening on a
// loopback port. The pages are server-rendered; the only script is /assets/pay.js (the card form).

const ADDRESS = '0x' + '1'.repeat(40);
const IBAN = 'IBAN DE89 3704 0044 0532 0130 00';
const BIC = 'BIC COBADEFFXXX';
const PAYS = '4242 4242 4242 4242';
const DECLINED = '4000 0000 0000 0002';
/** An expiry safely in the future, so only the card number decides the outcome. */
const EXPIRY = `12/${String((new Date().getUTCFullYear() + 3) % 100).padStart(2, '0')}`;
const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));
const SCREENSHOT = `${RESULTS_DIR}pay-page.png`;
const SCREENSHOT_PHONE = `${RESULTS_DIR}pay-page-phone.png`;

let h: Harness;
let browser: Browser | undefined;
let base: string;
let key: string;
let handle: string;
let cryptoAccountId: string;

async function post(url: string, payload: Record<string, unknown>) {
  const res = await h.inject({ method: 'POST', url, key, payload });
  if (res.statusCode >= 300) throw new Error(`${url} answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

async function paymentRequest(memo: string, amount = '2.5'): Promise<{ token: string; url: string }> {
  const created = await post('/integration/payment-requests', {
    account_id: cryptoAccountId,
    amount,
    currency: 'USD',
    memo,
  });
  // The record's url is built from PUBLIC_URL; the browser goes to the port the test listens on.
  return { token: created.token, url: `${base}/pay/${created.token}` };
}

async function requestRecord(token: string) {
  const res = await h.inject({ method: 'GET', url: `/integration/payment-requests/${token}`, key });
  expect(res.statusCode).toBe(200);
  return res.json();
}

async function payByCardForm(page: Page, number: string) {
  await page.fill('#card-number', number);
  await page.fill('#card-exp', EXPIRY);
  await page.fill('#card-cvc', '123');
  await page.click('#card-form button[type="submit"]');
  // pay.js writes "Paying…" first, then the outcome. Poll from Playwright's own isolated world:
  // waitForFunction would need eval in the page, which the page's CSP rightly forbids.
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const current = (await page.textContent('#card-result'))?.trim() ?? '';
    if (current !== '' && current !== 'Paying…') return current;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('The card form gave no answer within 10 seconds.');
}

/** Screenshots the page at desktop width and at 390 px (a phone) into test-results/. */
async function shootBothWidths(page: Page, name: string) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  for (const [suffix, width] of [
    ['desktop', 1200],
    ['phone', 390],
  ] as const) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: `${RESULTS_DIR}${name}-${suffix}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1200, height: 900 });
}

/** Text as read: runs of whitespace (the markup's line breaks) collapsed to one space. */
function squash(content: string | null): string {
  return (content ?? '').replace(/\s+/g, ' ').trim();
}

async function text(page: Page, selector: string): Promise<string> {
  return ((await page.textContent(selector)) ?? '').trim();
}

/** Waits (polling from the test, not by eval in the page: its CSP forbids that) for a text. */
async function waitForText(page: Page, selector: string, expected: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  let current = '';
  while (Date.now() < deadline) {
    current = await text(page, selector);
    if (current === expected) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${selector} read "${current}", not "${expected}", after ${timeoutMs} ms.`);
}

describe('public pages in a browser', () => {
  let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
  beforeAll(async () => {
    // Without Chromium nothing starts here; beforeEach fails (CI) or skips (elsewhere) each test.
    if (!chromiumInstalled) return;
    app = await startBrowserApp();
    ({ browser, h, base } = app);
    const world = await h.world({ scopes: ['accounts', 'payments'] });
    key = world.key.key;
    const space = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${world.spaceId}`,
      session: world.owner.token,
    });
    handle = space.json().public_handle;
    expect(handle).toMatch(/\S/);
    cryptoAccountId = (
      await post('/integration/accounts', {
        kind: 'crypto',
        name: 'Wallet',
        currency: 'USDC',
        network: 'local',
        address: ADDRESS,
      })
    ).id;
    await post('/integration/accounts', {
      kind: 'bank',
      name: 'Bank',
      currency: 'USD',
      details: `${IBAN}\n${BIC}`,
    });
  });

  afterAll(() => app?.close());

  beforeEach(({ skip }) => requireChromium(skip));

  it('shows the amount, the memo as text, the seller’s name and all three rails: stablecoin with address, exact amount and QR, bank with requisites and reference, card form', async () => {
    const memo = 'One API call <b>bold</b> <img src="x"> & "quotes"';
    const { token, url } = await paymentRequest(memo);
    const page = await browser!.newPage({ viewport: { width: 900, height: 900 } });
    try {
      const response = await page.goto(url);
      expect(response?.status()).toBe(200);

      expect(await text(page, '#amount')).toBe('2.50 USD');
      // HTML in the memo is shown as the characters typed, never as markup.
      expect(await text(page, '#memo')).toBe(memo);
      expect(await page.locator('#memo *').count()).toBe(0);
      // The business is named by its name (the book's, without a profile), never by its handle.
      expect(await text(page, '#seller')).toBe('Test space');
      expect(squash(await page.locator('body').textContent())).not.toContain(handle);
      expect(await text(page, '#status')).toBe('Awaiting payment');

      const stablecoin = page.locator('#rail-stablecoin');
      expect(await stablecoin.isVisible()).toBe(true);
      expect(await text(page, '#pay-to')).toBe(ADDRESS);
      const stablecoinText = squash(await stablecoin.textContent());
      expect(stablecoinText).toContain('Send exactly 2.50 USDC');
      expect(stablecoinText).toContain('on Tollbook development chain to');
      const qr = stablecoin.locator('svg');
      expect(await qr.count()).toBe(1);
      const box = await qr.boundingBox();
      expect(box?.width).toBeGreaterThan(100);
      expect(box?.height).toBeGreaterThan(100);

      const bankText = squash(await page.locator('#rail-bank').textContent());
      expect(bankText).toContain('Transfer 2.50 USD to Test space');
      expect(bankText).toContain(IBAN);
      expect(bankText).toContain(BIC);
      const reference = await text(page, '#bank-reference');
      expect(reference).toMatch(/^TB-[A-Z0-9]{6,}$/);

      expect(await page.locator('#rail-card').isVisible()).toBe(true);
      for (const input of ['#card-number', '#card-exp', '#card-cvc']) {
        expect(await page.locator(`#card-form ${input}`).isVisible()).toBe(true);
      }
      expect(await text(page, '#card-form button[type="submit"]')).toBe('Pay 2.50 USD');
      expect(await text(page, '#card-result')).toBe('');

      mkdirSync(RESULTS_DIR, { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      // And on a phone: the rails stack, nothing is wider than the screen.
      await page.setViewportSize({ width: 390, height: 800 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.screenshot({ path: SCREENSHOT_PHONE, fullPage: true });
      expect((await requestRecord(token)).status).toBe('active');
    } finally {
      await page.close();
    }
  });

  it('pays with the test card 4242 in the browser: the form says paid, the badge turns paid, and the request is paid in full', async () => {
    const { token, url } = await paymentRequest('Card payment');
    const page = await browser!.newPage();
    try {
      await page.goto(url);
      expect(await text(page, '#status')).toBe('Awaiting payment');

      const result = await payByCardForm(page, PAYS);
      expect(result).toMatch(/paid/i);
      // The status poller turns the badge at once and hides every way to pay.
      await waitForText(page, '#status', 'Paid');
      expect(await page.locator('#rail-card').isHidden()).toBe(true);
      expect(await page.locator('#card-form button[type="submit"]').isDisabled()).toBe(true);

      const record = await requestRecord(token);
      expect(record.status).toBe('paid');
      // Paid in full: a card names the request it pays, so it pays the price itself (the tag
      // under a cent is only for telling direct transfers apart).
      expect(record.amount_received).toBe('2.50000000');
      expect(record.amount).toBe('2.50000000');

      // Reloaded, the page itself says paid and offers no way to pay again.
      await page.reload();
      expect(await text(page, '#status')).toBe('Paid');
      expect(await page.locator('#card-form').count()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it('says it cannot tell when the card answer is lost or a 503, never that the payment failed, and a second try pays once', async () => {
    const { token, url } = await paymentRequest('Answer lost', '3');
    const page = await browser!.newPage();
    try {
      await page.goto(url);
      // The first card post reaches the server and pays; its answer never reaches the page.
      await page.route('**/pay/*/card', async (route) => {
        const paid = await h.inject({
          method: 'POST',
          url: `/pay/${token}/card`,
          payload: { number: PAYS, exp: EXPIRY, cvc: '123' },
        });
        expect(paid.statusCode).toBe(200);
        await route.abort('connectionreset');
      });
      const lost = await payByCardForm(page, PAYS);
      expect(lost).toMatch(/^We could not tell whether the payment went through/);
      expect(lost).not.toMatch(/did not go through/);
      expect(await page.locator('#card-result').getAttribute('data-outcome')).toBe('unknown');
      // The status poller finds out what happened: it did go through.
      await waitForText(page, '#status', 'Paid');
      await shootBothWidths(page, 'pay-page-answer-lost');
      expect((await requestRecord(token)).status).toBe('paid');
      expect((await requestRecord(token)).amount_received).toBe('3.00000000');
    } finally {
      await page.close();
    }

    const second = await paymentRequest('Answer 503', '3');
    const again = await browser!.newPage();
    try {
      await again.goto(second.url);
      await again.route('**/pay/*/card', (route) =>
        route.fulfill({
          status: 503,
          headers: { 'retry-after': '1', 'content-type': 'application/json' },
          body: JSON.stringify({ error: 'service_unavailable', detail: 'retry shortly' }),
        }),
      );
      const unavailable = await payByCardForm(again, PAYS);
      expect(unavailable).toMatch(/^We could not tell whether the payment went through/);
      expect(await text(again, '#status')).toBe('Awaiting payment');
      await shootBothWidths(again, 'pay-page-answer-unknown');
      // The button is back: a second try, now answered, pays the request once.
      await again.unroute('**/pay/*/card');
      expect(await again.locator('#card-form button[type="submit"]').isEnabled()).toBe(true);
      expect(await payByCardForm(again, PAYS)).toMatch(/paid/i);
      await waitForText(again, '#status', 'Paid');
      expect((await requestRecord(second.token)).amount_received).toBe('3.00000000');
    } finally {
      await again.close();
    }
  });

  it('turns to Paid by itself, without a reload, when another rail settles the request', async () => {
    const { token, url } = await paymentRequest('Settled elsewhere', '4');
    const page = await browser!.newPage();
    let loads = 0;
    try {
      await page.goto(url);
      page.on('load', () => loads++);
      expect(await text(page, '#status')).toBe('Awaiting payment');
      expect(await page.locator('#received').isHidden()).toBe(true);
      // The payer's other device pays by card: this page only learns of it by asking.
      const paid = await h.inject({
        method: 'POST',
        url: `/pay/${token}/card`,
        payload: { number: PAYS, exp: EXPIRY, cvc: '123' },
      });
      expect(paid.statusCode).toBe(200);
      await waitForText(page, '#status', 'Paid');
      expect(await page.locator('#paid-note').isVisible()).toBe(true);
      expect(await page.locator('#rail-card').isHidden()).toBe(true);
      expect(await page.locator('#rail-stablecoin').isHidden()).toBe(true);
      expect(await page.locator('#received').isHidden()).toBe(true);
      expect(loads).toBe(0);
    } finally {
      await page.close();
    }
  });

  it('answers its status poll with the status and amounts, and a 404 for an unknown request', async () => {
    const { token } = await paymentRequest('Polled');
    const res = await h.inject({
      method: 'GET',
      url: `/pay/${token}/status`,
      headers: { accept: 'application/json' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 'active',
      amount: '2.50000000',
      amount_received: '0.00000000',
      currency: 'USD',
      received_label: '0.00 USD',
    });
    expect(res.headers['cache-control']).toBe('no-store');
    const unknown = await h.inject({ method: 'GET', url: `/pay/pr_${'x'.repeat(40)}/status` });
    expect(unknown.statusCode).toBe(404);
  });

  it('shows the decline message for the card 4000 0000 0000 0002 and leaves the request active and unpaid', async () => {
    const { token, url } = await paymentRequest('Declined card');
    const page = await browser!.newPage();
    try {
      await page.goto(url);
      const cardAnswer = page.waitForResponse((res) => res.url() === `${url}/card`);
      const result = await payByCardForm(page, DECLINED);
      const answer = await cardAnswer;
      expect(answer.status()).toBe(402);
      expect((await answer.json()).error).toBe('card_declined');

      expect(result).toMatch(/declined/i);
      expect(await text(page, '#status')).toBe('Awaiting payment');
      expect(await page.locator('#card-form button[type="submit"]').isDisabled()).toBe(false);

      const record = await requestRecord(token);
      expect(record.status).toBe('active');
      expect(record.amount_received ?? '0.00000000').toBe('0.00000000');
    } finally {
      await page.close();
    }
  });

  it('shows a client, with no login, the balance, what was paid in, both paid calls and the card top-up', async () => {
    const clientRef = `client-${randomUUID()}`;
    const charge = (amount: string, resource: string) =>
      post('/integration/charges', {
        client_ref: clientRef,
        account_id: cryptoAccountId,
        amount,
        resource,
        top_up_amount: '5',
      });

    const refused = await charge('0.4', 'GET /v1/search');
    expect(refused.paid).toBe(false);
    expect(refused.top_up?.token).toBeTruthy();
    const balancePath = new URL(refused.balance_url).pathname;
    expect(balancePath).toMatch(/^\/credit\/.+/);

    const payer = await browser!.newPage();
    try {
      await payer.goto(`${base}/pay/${refused.top_up.token}`);
      expect(await payByCardForm(payer, PAYS)).toMatch(/paid/i);
    } finally {
      await payer.close();
    }
    expect((await charge('0.4', 'GET /v1/search')).paid).toBe(true);
    expect((await charge('0.25', 'GET /v1/weather')).paid).toBe(true);

    // A fresh context: no cookies, no session, nothing but the address.
    const context = await browser!.newContext();
    try {
      expect(await context.cookies()).toEqual([]);
      const page = await context.newPage();
      const response = await page.goto(`${base}${balancePath}`);
      expect(response?.status()).toBe(200);
      expect(await text(page, '#balance')).toBe('4.35 USD');
      expect(await text(page, '#paid-in')).toBe('5.00 USD');
      expect(await page.getByText(clientRef).isVisible()).toBe(true);

      const calls = await page.locator('#calls tbody tr').allInnerTexts();
      expect(calls).toHaveLength(2);
      expect(calls.some((row) => row.includes('GET /v1/search') && row.includes('0.40 USD'))).toBe(true);
      expect(calls.some((row) => row.includes('GET /v1/weather') && row.includes('0.25 USD'))).toBe(true);

      const topUps = await page.locator('#top-ups tbody tr').allInnerTexts();
      expect(topUps).toHaveLength(1);
      expect(topUps[0]).toContain('card');
      expect(topUps[0]).toContain('5.00 USD');
    } finally {
      await context.close();
    }
  });

  it('refuses to be framed by another origin: the frame does not render the pay page, and the answer carries X-Frame-Options DENY and frame-ancestors none', async () => {
    const { url } = await paymentRequest('Framed');
    // Another loopback origin (other port) that frames the pay page, and, as a control, a page
    // of its own that may be framed: it proves the check below would see a rendered frame.
    const outer: Server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      if (req.url === '/control') return res.end('<!doctype html><p id="amount">control</p>');
      res.end(
        `<!doctype html><iframe id="pay" src="${url}"></iframe><iframe id="control" src="/control"></iframe>`,
      );
    });
    await new Promise<void>((resolve) => outer.listen(0, '127.0.0.1', resolve));
    const outerUrl = `http://127.0.0.1:${(outer.address() as AddressInfo).port}/`;
    const page = await browser!.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    try {
      const payResponse = page.waitForResponse((res) => res.url() === url);
      await page.goto(outerUrl, { waitUntil: 'load' });
      const response = await payResponse;
      expect(response.headers()['x-frame-options']).toBe('DENY');
      expect(response.headers()['content-security-policy']).toContain("frame-ancestors 'none'");

      const control = await (await page.$('#control'))!.contentFrame();
      expect(await control!.$('#amount')).not.toBeNull();

      const framed = await (await page.$('#pay'))!.contentFrame();
      expect(framed).not.toBeNull();
      // Chromium swaps a refused frame for its own error page and says why on the console.
      expect(framed!.url()).not.toBe(url);
      expect(consoleErrors.join('\n')).toMatch(/frame-ancestors|X-Frame-Options/);
      expect(await framed!.$('#amount')).toBeNull();
      expect(await framed!.$('#card-form')).toBeNull();
      const framedText = await framed!
        .evaluate('document.body ? document.body.innerText : ""')
        .catch(() => '');
      expect(String(framedText)).not.toContain('2.50 USD');
    } finally {
      await page.close();
      await new Promise<void>((resolve) => outer.close(() => resolve()));
    }
  });

  it('loads the pay page and pays by card with no console error, no page error and no CSP violation', async () => {
    const { url } = await paymentRequest('Clean console');
    const page = await browser!.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning')
        problems.push(`console ${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('requestfailed', (request) =>
      problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`),
    );
    // Collected inside the page; Playwright injects this through the DevTools protocol, so the
    // page's own CSP does not apply to it.
    await page.addInitScript(
      `window.__violations = []; document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));`,
    );
    try {
      const script = page.waitForResponse((res) => res.url() === `${base}/assets/pay.js`);
      await page.goto(url, { waitUntil: 'load' });
      expect((await script).status()).toBe(200);
      // The script ran (the form is handled by it, not submitted as a plain form) and its fetch
      // to /pay/{token}/card passed connect-src.
      expect(await payByCardForm(page, PAYS)).toMatch(/paid/i);
      expect(page.url()).toBe(url);
      const violations = (await page.evaluate('window.__violations')) as string[];
      expect(violations).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('answers a mangled address (a NUL byte in the token) with the HTML not-found page, not a server error', async () => {
    // A person may follow a link that was cut or garbled; an ordinary unknown token already
    // gets the not-found page, and so must a token the database cannot store.
    const page = await browser!.newPage();
    try {
      for (const path of ['/pay/pr_unknown', '/pay/%00', '/credit/%00']) {
        const response = await page.goto(`${base}${path}`);
        expect(response?.status(), path).toBe(404);
        expect(response?.headers()['content-type'], path).toContain('text/html');
        expect(await text(page, 'h1'), path).toBe('Not found');
      }
    } finally {
      await page.close();
    }
  });
});
