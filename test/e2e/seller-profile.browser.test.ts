import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import jsqr from 'jsqr';
import type { Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness, User } from '../harness.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// Book settings' seller profile as an owner meets it in Chromium: filled in, refused in place
// for a bad handle, saved, and printed on the invoice sent afterwards.

// jsqr is CommonJS: at run time its function is the module itself; to the checker, its default.
const jsQR = ((jsqr as unknown as { default?: unknown }).default ?? jsqr) as typeof jsqr.default;

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

async function signedInPage(user: User): Promise<{ page: Page; problems: string[] }> {
  const context = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addCookies([{ name: 'tb_session', value: user.token, url: base }]);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
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

/** Polls a reading of the page until it gives the wanted value (a save reloads the page). */
async function until(read: () => Promise<string | null>, wanted: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  let current: string | null = null;
  while (Date.now() < deadline) {
    current = await read().catch((error: Error) => `(${error.message})`);
    if (current === wanted) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`read ${JSON.stringify(current)}, not ${JSON.stringify(wanted)}, after ${timeoutMs} ms`);
}

describe('the seller profile in Book settings', () => {
  it('is filled in, refuses a bad handle in place, saves, and names the seller on the next invoice', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner, { name: 'Browser book' });
    const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Main bank (EUR)', currency: 'EUR' });
    const { page, problems } = await signedInPage(owner);
    await page.goto(`${base}/app/books/${spaceId}/settings`);
    page.setDefaultTimeout(10_000);
    await page.fill('#field-legal_name', 'Nordlicht Studio GmbH');
    await page.fill('#field-trading_name', 'Nordlicht');
    await page.fill('#field-address\\.line1', 'Hafenstraße 12');
    await page.fill('#field-address\\.postal_code', '20457');
    await page.fill('#field-address\\.city', 'Hamburg');
    await page.selectOption('#field-address\\.country', 'DE');
    await page.fill('#field-vat_id', 'DE123456789');
    await page.fill('#field-email', 'billing@nordlicht.example');
    await page.fill('#field-payment_terms_days', '30');
    await page.fill('#field-invoice_footer', 'Thank you for your business.');
    await page.fill('#field-public_handle', 'Not A Slug');
    await page.getByRole('button', { name: 'Save the profile' }).click();
    await page.locator('#field-public_handle-error').waitFor({ timeout: 10_000 });
    expect(await page.inputValue('#field-trading_name')).toBe('Nordlicht');
    expect(await page.getAttribute('#field-public_handle', 'aria-invalid')).toBe('true');
    await shoot(page, 'app-settings-profile-refused');

    const handle = `nordlicht-${spaceId.slice(0, 6)}`;
    await page.fill('#field-public_handle', handle);
    await page.getByRole('button', { name: 'Save the profile' }).click();
    // The refused page names the book; the saved one names the business.
    await until(() => page.locator('#profile strong').first().textContent(), 'Nordlicht');
    expect(await page.inputValue('#field-public_handle')).toBe(handle);
    expect(await page.inputValue('#field-address\\.country')).toBe('DE');
    expect(await page.inputValue('#field-payment_terms_days')).toBe('30');
    expect(await page.locator('#profile strong').first().textContent()).toBe('Nordlicht');
    await page.fill('#field-invoice\\.prefix', 'RE-');
    await page.fill('#field-invoice\\.next_number', '5');
    await page.getByRole('button', { name: 'Save the numbering' }).click();
    await until(() => page.textContent('#field-invoice\\.next_number-hint'), 'Next: RE-000005');
    expect(await page.textContent('#field-quote\\.next_number-hint')).toBe('Next: QUO-000001');
    await shoot(page, 'app-settings-profile');

    const res = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/invoices`,
      session: owner.token,
      payload: {
        account_id: account.id,
        client_name: 'Acme GmbH',
        due_on: '2099-06-30',
        line_items: [{ description: 'Design', unit_price: '800' }],
      },
    });
    const sent = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/invoices/${res.json().id}/send`,
      session: owner.token,
      payload: { via: 'none' },
    });
    expect(sent.json()).toMatchObject({
      number: 'RE-000005',
      seller_name: 'Nordlicht',
      seller_tax_id: 'DE123456789',
    });
    // The refused post answered 422, which Chromium logs as a failed resource; nothing else.
    expect(problems.filter((problem) => !/status of 422/.test(problem))).toEqual([]);
  });
});

describe('the bank transfer on the pay page', () => {
  it('shows the trading name, holder, grouped IBAN, BIC, amount and reference with copy buttons, and a GiroCode a banking app reads', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner, { name: 'Pay book', base_currency: 'EUR' });
    await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${spaceId}/profile`,
      session: owner.token,
      payload: { legal_name: 'Nordlicht Studio GmbH', trading_name: 'Nordlicht' },
    });
    const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Main bank (EUR)', currency: 'EUR' });
    const { page, problems } = await signedInPage(owner);
    // The bank details are written on the account's page, as an owner would.
    await page.goto(`${base}/app/books/${spaceId}/accounts/${account.id}`);
    // The form shows the chosen scheme's fields only: none before a scheme is chosen.
    expect(await page.locator('#scheme-fields input').count()).toBe(0);
    await page.selectOption('#field-requisites\\.scheme', 'uk');
    await page.locator('#field-requisites\\.sort_code').waitFor();
    expect(await page.locator('#field-requisites\\.iban').count()).toBe(0);
    await shoot(page, 'app-account-scheme-uk');
    await page.selectOption('#field-requisites\\.scheme', 'sepa');
    await page.locator('#field-requisites\\.iban').waitFor();
    for (const other of ['sort_code', 'account_number', 'routing_number', 'swift_bic'])
      expect(await page.locator(`#field-requisites\\.${other}`).count(), other).toBe(0);
    await shoot(page, 'app-account-scheme-sepa');
    await page.fill('#field-requisites\\.holder', 'Nordlicht Studio GmbH');
    await page.fill('#field-requisites\\.iban', 'DE89 3704 0044 0532 0130 01');
    await page.fill('#field-requisites\\.bic', 'COBADEFFXXX');
    await page.getByRole('button', { name: 'Save the account' }).click();
    await page.locator('#field-requisites\\.iban-error').waitFor();
    expect(await page.textContent('#field-requisites\\.iban-error')).toMatch(/mod-97/);
    await page.fill('#field-requisites\\.iban', 'DE89 3704 0044 0532 0130 00');
    await page.getByRole('button', { name: 'Save the account' }).click();
    await until(() => page.inputValue('#field-requisites\\.iban'), 'DE89370400440532013000');
    await shoot(page, 'app-account-requisites');

    const key = await h.issueKey(owner, spaceId, { scopes: ['payments'] });
    const created = await h.inject({
      method: 'POST',
      url: '/integration/payment-requests',
      key: key.key,
      payload: { account_id: account.id, amount: '1234.5', currency: 'EUR', memo: 'Invoice 7' },
    });
    expect(created.statusCode, created.body).toBe(201);
    await page.goto(`${base}/pay/${created.json().token}`);
    const bank = page.locator('#rail-bank');
    const bankText = (await bank.textContent())?.replace(/\s+/g, ' ') ?? '';
    expect(bankText).toContain('Transfer 1,234.50 EUR to Nordlicht.');
    expect(bankText).not.toContain('Main bank');
    expect(await page.textContent('#seller')).toBe('Nordlicht');
    expect(await page.textContent('#bank-holder')).toBe('Nordlicht Studio GmbH');
    expect(await page.textContent('#bank-iban')).toBe('DE89 3704 0044 0532 0130 00');
    expect(await page.textContent('#bank-bic')).toBe('COBADEFFXXX');
    const reference = (await page.textContent('#bank-reference')) ?? '';
    expect(reference).toMatch(/^TB-[A-Z0-9]{10}$/);
    const copies = await bank
      .locator('button.copy')
      .evaluateAll((buttons) => buttons.map((button) => (button as HTMLElement).dataset.copy));
    expect(copies).toEqual([
      'Nordlicht Studio GmbH',
      'DE89370400440532013000',
      'COBADEFFXXX',
      '1234.5',
      reference,
    ]);
    await shoot(page, 'pay-bank-transfer');

    // The GiroCode as the browser drew it, read back from a screenshot.
    const png = PNG.sync.read(await page.locator('#bank-qr').screenshot());
    const decoded = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
    expect(decoded, 'the GiroCode did not decode').not.toBeNull();
    const lines = decoded!.data.split('\n');
    expect(lines[0]).toBe('BCD');
    expect(lines[1]).toBe('002');
    expect(lines[2]).toBe('1');
    expect(lines[3]).toBe('SCT');
    expect(lines[4]).toBe('COBADEFFXXX');
    expect(lines[5]).toBe('Nordlicht Studio GmbH');
    expect(lines[6]).toBe('DE89370400440532013000');
    expect(lines[7]).toBe('EUR1234.50');
    expect(lines[8]).toBe('');
    expect(lines[9]).toBe('');
    expect(lines[10]).toBe(reference);
    expect(lines).toHaveLength(11);
    expect(problems.filter((problem) => !/status of 422/.test(problem))).toEqual([]);
  });
});
