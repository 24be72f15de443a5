import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from '../harness.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// The owner's web app as a person uses it: a real Chromium against the real app on a loopback
// port. Sign up, create a book, add an account, issue a key and read it once, mint a payment
// request with that key over HTTP, find it in the list and open its pay page; prove an address
// with a pasted signature; a viewer finds no write and cannot post one; posts without the CSRF
// token are refused; a name with <script> is text everywhere. Screenshots go to test-results/.

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/app/', import.meta.url));
const EVIL = '<script>window.__pwned = 1</script><b>Evil & Co</b>';
const PASSWORD = 'correct horse battery';

let h: Harness;
let browser: Browser | undefined;
let base: string;
const consoleErrors: string[] = [];

async function personContext(width = 1200, height = 900): Promise<BrowserContext> {
  const context = await browser!.newContext({ viewport: { width, height } });
  context.on('page', (page) => watchConsole(page));
  return context;
}

function watchConsole(page: Page) {
  page.on('console', (message) => {
    // Chromium also logs every 4xx answer; the tests ask for those (a refused form, a viewer's
    // post) and check them, so only script errors and CSP refusals count here.
    if (
      message.type() !== 'error' ||
      /Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())
    )
      return;
    consoleErrors.push(`${page.url()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: ${error.message}`));
}

async function shoot(page: Page, name: string) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  await page.screenshot({ path: `${RESULTS_DIR}${name}.png`, fullPage: true });
}

async function signUp(page: Page, name: string, email: string) {
  await page.goto(`${base}/app`);
  expect(page.url()).toContain('/app/login');
  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.getByLabel('Your name').fill(name);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.waitForURL(/\/app\/books$/);
}

async function logIn(page: Page, email: string) {
  await page.goto(`${base}/app/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(/\/app\/books\//);
}

function bookIdOf(page: Page): string {
  const match = /\/app\/books\/([0-9a-f-]{36})/.exec(page.url());
  if (!match) throw new Error(`not inside a book: ${page.url()}`);
  return match[1]!;
}

describe('the owner web app in a browser', () => {
  let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
  let owner: Page;
  let bookId: string;
  const ownerEmail = `owner-${randomUUID()}@example.com`;
  const wallet = privateKeyToAccount(generatePrivateKey());
  /** The key issued on the Keys screen, read once there. */
  let issuedKey = '';

  beforeAll(async () => {
    if (!chromiumInstalled) return;
    app = await startBrowserApp();
    ({ browser, h, base } = app);
    owner = await (await personContext()).newPage();
  });
  afterAll(() => app?.close());
  beforeEach(({ skip }) => requireChromium(skip));

  it('signs up, creates a book (its <script> name shown as text) and an account', async () => {
    await signUp(owner, 'Olive Owner', ownerEmail);
    expect(await owner.getByText('No books yet').isVisible()).toBe(true);
    await shoot(owner, 'books-empty');
    await owner.getByLabel('Name', { exact: true }).fill(EVIL);
    await owner.getByLabel('Base currency').fill('USD');
    await owner.getByRole('button', { name: 'Create the book' }).click();
    // A new book opens on its Home, with the first-steps checklist.
    await owner.waitForURL(/\/app\/books\/[0-9a-f-]{36}$/);
    await owner.getByRole('heading', { name: 'First steps' }).waitFor();
    bookId = bookIdOf(owner);
    await owner.getByRole('link', { name: 'Book settings' }).click();
    await owner.waitForURL(/\/settings$/);
    // The name is text in the switcher and the settings form, and no script ran.
    expect(await owner.locator('#book-switch option:checked').textContent()).toBe(EVIL);
    expect(await owner.locator('#field-name').inputValue()).toBe(EVIL);
    expect(await owner.locator('main b').count()).toBe(0);
    expect(await owner.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
    await shoot(owner, 'settings');

    await owner.getByRole('link', { name: 'Accounts' }).click();
    await owner.waitForURL(/\/accounts$/);
    expect(await owner.getByText('No accounts yet').isVisible()).toBe(true);
    await owner.getByLabel('Kind').selectOption('crypto');
    await owner.getByLabel('Name', { exact: true }).fill('Wallet');
    await owner.getByLabel('Currency').fill('USDC');
    await owner.getByLabel('Address (crypto)').fill(wallet.address);
    await owner.getByLabel('Network (crypto)').selectOption('local');
    await owner.getByRole('button', { name: 'Create the account' }).click();
    await owner.locator('table').getByText('Wallet').waitFor();
    expect(await owner.locator('table').getByText('0.00 USDC').isVisible()).toBe(true);
  });

  it('shows a refused form in place: an account without a name keeps what was typed and says why', async () => {
    await owner.goto(`${base}/app/books/${bookId}/accounts`);
    await owner.getByLabel('Currency').fill('EUR');
    await owner.getByLabel('Name', { exact: true }).evaluate((input) => input.removeAttribute('required'));
    await owner.getByRole('button', { name: 'Create the account' }).click();
    await owner.getByRole('alert').waitFor();
    expect(await owner.getByRole('alert').textContent()).toContain('Some fields need another look');
    expect(await owner.locator('#field-currency').inputValue()).toBe('EUR');
    expect(await owner.locator('#field-name-error').textContent()).toMatch(/\S/);
    await shoot(owner, 'accounts-error');
  });

  it('issues a key shown once with a copy button, mints a payment request with it over HTTP, lists it and opens its pay page', async () => {
    await owner.goto(`${base}/app/books/${bookId}/keys`);
    expect(await owner.getByText('No keys yet').isVisible()).toBe(true);
    await owner.getByLabel('Name', { exact: true }).fill('Production server');
    await owner.getByLabel('accounts').check();
    await owner.getByRole('button', { name: 'Issue the key' }).click();
    await owner.locator('#issued-key').waitFor();
    const key = (await owner.locator('#issued-key').textContent())!;
    expect(key).toMatch(/^oit_/);
    issuedKey = key;
    expect(await owner.locator('#issued-secret').textContent()).toMatch(/^whsec_/);
    expect(await owner.getByText('you will not see this again').first().isVisible()).toBe(true);
    expect(await owner.locator('[data-copy="issued-key"]').isVisible()).toBe(true);
    await shoot(owner, 'keys-issued');

    // Shown once: the list shows the prefix only, never the key again.
    await owner.goto(`${base}/app/books/${bookId}/keys`);
    expect(await owner.content()).not.toContain(key);
    expect(
      await owner
        .locator('table')
        .getByText(`${key.slice(0, 12)}…`)
        .isVisible(),
    ).toBe(true);

    const accounts = await h.inject({ method: 'GET', url: '/integration/accounts', key });
    const accountId = accounts.json().items[0].id;
    const minted = await h.inject({
      method: 'POST',
      url: '/integration/payment-requests',
      key,
      payload: { account_id: accountId, amount: '12.5', currency: 'USDC', memo: 'Pro plan, November' },
    });
    expect(minted.statusCode).toBe(201);
    const token = minted.json().token;

    await owner.getByRole('link', { name: 'Payment requests' }).click();
    await owner.waitForURL(/\/payment-requests$/);
    const row = owner.locator('tr', { hasText: 'Pro plan, November' });
    expect(await row.getByText('12.50 USDC').isVisible()).toBe(true);
    expect(await row.getByText('0.00 USDC').isVisible()).toBe(true);
    expect(await row.getByText('active').isVisible()).toBe(true);
    await shoot(owner, 'payment-requests');
    const href = (await row.getByRole('link', { name: 'Open' }).getAttribute('href'))!;
    expect(href.endsWith(`/pay/${token}`)).toBe(true);
    // The record's address is built from PUBLIC_URL; the browser goes to the port the test listens on.
    const payPage = await owner.context().newPage();
    const response = await payPage.goto(`${base}${new URL(href).pathname}`);
    expect(response?.status()).toBe(200);
    expect(await payPage.locator('#memo').textContent()).toContain('Pro plan, November');
    await payPage.close();

    // Keys show when they were last used.
    await owner.goto(`${base}/app/books/${bookId}/keys`);
    expect(await owner.locator('tr', { hasText: 'Production server' }).getByText('never').count()).toBe(1);
  });

  it('pays a request minted with that key by test card on its page, then shows it paid in the list, on the Endpoints card, in Income and in the Ledger', async () => {
    const resource = 'https://api.example.com/v1/weather';
    const accounts = await h.inject({ method: 'GET', url: '/integration/accounts', key: issuedKey });
    const minted = await h.inject({
      method: 'POST',
      url: '/integration/payment-requests',
      key: issuedKey,
      payload: {
        account_id: accounts.json().items[0].id,
        amount: '2',
        currency: 'USDC',
        memo: 'Weather call',
        resource,
      },
    });
    expect(minted.statusCode).toBe(201);
    await owner.goto(`${base}/app/books/${bookId}/payment-requests`);
    const row = owner.locator('tr', { hasText: 'Weather call' });
    expect(await row.getByText('active').isVisible()).toBe(true);

    // The payer opens the pay page from the list's link and pays with the test card.
    const href = (await row.getByRole('link', { name: 'Open' }).getAttribute('href'))!;
    const payer = await (await personContext()).newPage();
    await payer.goto(`${base}${new URL(href).pathname}`);
    await payer.fill('#card-number', '4242 4242 4242 4242');
    await payer.fill('#card-exp', `12/${String((new Date().getUTCFullYear() + 3) % 100).padStart(2, '0')}`);
    await payer.fill('#card-cvc', '123');
    await payer.click('#card-form button[type="submit"]');
    await payer.locator('#status', { hasText: 'Paid' }).waitFor();
    await payer.context().close();

    // The seller sees it paid in the list, on the endpoint's card, in Income and in the Ledger.
    await owner.reload();
    const paid = owner.locator('tr', { hasText: 'Weather call' });
    await paid.getByText('Paid', { exact: true }).waitFor();
    expect(await paid.getByText('2.00 USDC').count()).toBe(2);
    await owner.getByRole('link', { name: 'Endpoints' }).click();
    const card = owner.locator('article.endpoint', { hasText: resource });
    expect(await card.locator('[data-field="calls"]').textContent()).toBe('1');
    const incomeHref = await card.getByRole('link', { name: 'Income of this endpoint' }).getAttribute('href');
    await owner.goto(`${base}${incomeHref}`);
    const income = owner.locator('tbody tr').first();
    expect((await income.textContent())?.replace(/\s+/g, ' ')).toContain('2.00 USDC');
    await income.locator('summary').click();
    await income.locator('details .payments', { hasText: 'card ending 4242' }).waitFor();
    await income.locator('details .payments a', { hasText: 'Entry' }).click();
    await owner.waitForURL(/\/ledger\/[0-9a-f-]{36}$/);
    const postings = (await owner.locator('table.postings').textContent())?.replace(/\s+/g, ' ') ?? '';
    expect(postings).toContain('2.00 USDC');
    expect(postings).toContain('Income · endpoint');
    await owner.getByRole('link', { name: 'Ledger' }).first().click();
    await owner.waitForURL(/\/ledger$/);
    expect(await owner.locator('tbody tr', { hasText: 'card ending 4242' }).count()).toBeGreaterThan(0);
    await shoot(owner, 'ledger');
  });

  it('marks a payment request paid by hand and filters the list by status', async () => {
    await owner.goto(`${base}/app/books/${bookId}/payment-requests`);
    const row = owner.locator('tr', { hasText: 'Pro plan, November' });
    await row.getByRole('link', { name: 'Mark paid or cancel' }).click();
    await owner.getByRole('heading', { name: 'Payment request: Pro plan, November' }).waitFor();
    // A refused amount is answered in place, beside its field.
    await owner.getByLabel('Amount received (USDC)').fill('twelve');
    await owner.getByLabel('Bank reference').fill('BANK-REF-1');
    await owner.getByRole('button', { name: 'Record the payment' }).click();
    await owner.locator('#field-amount-error').waitFor();
    await shoot(owner, 'mark-paid-refused');
    await owner.getByLabel('Amount received (USDC)').fill('12.5');
    await owner.getByRole('button', { name: 'Record the payment' }).click();
    const paid = owner.locator('tr', { hasText: 'Pro plan, November' });
    await paid.getByText('Paid', { exact: true }).waitFor();
    expect(await paid.getByText('12.50 USDC').count()).toBe(2);
    await owner.getByRole('link', { name: 'Active', exact: true }).click();
    await owner.getByText('No active payment requests').waitFor();
  });

  it('adds a contact with UK requisites: a bad sort code is answered beside its field, the fixed form saves', async () => {
    await owner.goto(`${base}/app/books/${bookId}/contacts`);
    await owner.getByRole('link', { name: 'UK (sort code)' }).click();
    await owner.getByLabel('Sort code').waitFor();
    await owner.getByLabel('Name', { exact: true }).fill('Harbour Ltd');
    await owner.getByLabel('Account number').fill('12345678');
    await owner.getByLabel('Sort code').fill('12-34');
    await owner.getByLabel('Account holder').fill('Harbour Ltd');
    await owner.getByRole('button', { name: 'Add the contact' }).click();
    await owner.locator('#field-addresses\\.0\\.requisites\\.sort_code-error').waitFor();
    expect(await owner.getByLabel('Account number').inputValue()).toBe('12345678');
    await shoot(owner, 'contacts-refused');
    await owner.getByLabel('Sort code').fill('12-34-56');
    await owner.getByRole('button', { name: 'Add the contact' }).click();
    await owner.locator('tr', { hasText: 'Harbour Ltd' }).getByText('UK 12345678').waitFor();
    await owner.getByRole('link', { name: 'Crypto address' }).click();
    await owner.getByLabel('Wallet address').waitFor();
    await shoot(owner, 'contacts-crypto');
  });

  it('proves an address with a signature pasted from a viem account', async () => {
    await owner.goto(`${base}/app/books/${bookId}/accounts`);
    await owner.getByRole('button', { name: 'Prove' }).click();
    const challenge = (await owner.locator('[data-challenge]').textContent())!.trim();
    expect(challenge).toContain(wallet.address);
    await shoot(owner, 'prove');
    // A wrong signature is refused in place, with a new challenge to sign.
    const wrong = await privateKeyToAccount(generatePrivateKey()).signMessage({ message: challenge });
    await owner.getByRole('textbox', { name: 'Signature' }).fill(wrong);
    await owner.getByRole('button', { name: 'Check the signature' }).click();
    await owner.locator('#field-signature[aria-invalid="true"]').waitFor();
    const fresh = (await owner.locator('[data-challenge]').textContent())!.trim();
    expect(fresh).not.toBe(challenge);
    await owner
      .getByRole('textbox', { name: 'Signature' })
      .fill(await wallet.signMessage({ message: fresh }));
    await owner.getByRole('button', { name: 'Check the signature' }).click();
    await owner.getByText(`Address ${wallet.address} proven.`).waitFor();
    expect(await owner.locator('tr', { hasText: 'Wallet' }).getByText('proven').isVisible()).toBe(true);
  });

  it('gives a viewer no write control, and refuses their posts anyway', async () => {
    const viewerEmail = `viewer-${randomUUID()}@example.com`;
    const viewerPage = await (await personContext()).newPage();
    await signUp(viewerPage, 'Vic Viewer', viewerEmail);
    await owner.goto(`${base}/app/books/${bookId}/members`);
    // The members screen also has the invitation form: this adds someone who has signed up.
    const addForm = owner.getByRole('form', { name: 'Add a member' });
    await addForm.getByLabel('Their email').fill(viewerEmail);
    await addForm.getByLabel('Role').selectOption('viewer');
    await addForm.getByRole('button', { name: 'Add' }).click();
    await owner.locator('tr', { hasText: viewerEmail }).waitFor();
    await shoot(owner, 'members');

    await viewerPage.goto(`${base}/app/books/${bookId}/payment-requests`);
    for (const screen of [
      'payment-requests',
      'accounts',
      'keys',
      'members',
      'settings',
      'contacts',
      'clients',
      'sites',
    ]) {
      await viewerPage.goto(`${base}/app/books/${bookId}/${screen}`);
      // The only posting form a viewer sees is Log out.
      const forms = await viewerPage
        .locator('form[method="post"]')
        .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('action')));
      expect(forms, screen).toEqual(['/app/logout']);
    }
    await shoot(viewerPage, 'viewer-accounts');
    const csrf = await viewerPage.locator('input[name="_csrf"]').first().inputValue();
    const refused = await viewerPage.evaluate(
      async ({ url, csrf }) => {
        const body = new URLSearchParams({ _csrf: csrf, kind: 'bank', name: 'Sneaky', currency: 'USD' });
        const res = await fetch(url, { method: 'POST', body });
        return res.status;
      },
      { url: `${base}/app/books/${bookId}/accounts`, csrf },
    );
    expect(refused).toBe(403);
    const accounts = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${bookId}/accounts`,
      headers: {},
    });
    expect(accounts.statusCode).toBe(401);
  });

  it('refuses a post without the CSRF token, even with the session cookie', async () => {
    const status = await owner.evaluate(async (url) => {
      const body = new URLSearchParams({ kind: 'bank', name: 'No token', currency: 'USD' });
      const res = await fetch(url, { method: 'POST', body });
      return res.status;
    }, `${base}/app/books/${bookId}/accounts`);
    expect(status).toBe(403);
    await owner.goto(`${base}/app/books/${bookId}/accounts`);
    expect(await owner.getByText('No token').count()).toBe(0);
  });

  it('reads well on a phone', async () => {
    const phone = await (await personContext(390, 844)).newPage();
    await logIn(phone, ownerEmail);
    for (const screen of ['payment-requests', 'keys', 'accounts']) {
      await phone.goto(`${base}/app/books/${bookId}/${screen}`);
      const width = await phone.evaluate(() => document.documentElement.scrollWidth);
      expect(width, screen).toBeLessThanOrEqual(390);
      await shoot(phone, `phone-${screen}`);
    }
  });

  it('logs out, after which the app asks to log in again', async () => {
    await owner.goto(`${base}/app/books/${bookId}/payment-requests`);
    await owner.getByRole('button', { name: 'Log out' }).click();
    await owner.waitForURL(/\/app\/login$/);
    await owner.goto(`${base}/app/books/${bookId}/keys`);
    expect(owner.url()).toContain('/app/login?next=');
  });

  it('wrote nothing to any console', () => {
    expect(consoleErrors).toEqual([]);
  });
});
