import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { asAmount, UNIT } from '../../src/core/money.ts';
import { increase, ledgerAccounts, postEntry } from '../../src/features/ledger/index.ts';
import { loadScreeningList } from '../../src/features/screening/index.ts';
import type { Harness } from '../harness.ts';
import { type Book, makeBook } from '../payouts-setup.ts';
import { holdScreeningList } from '../support/turns.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// Payments out as people meet them in Chromium: the owner makes a payment over an approval
// rule, an admin approves it and follows it to its ledger entry; a policy rule's block reads
// as a sentence; an owner releases a screening hold with a reason; the bank file downloads.

// This file loads its own sanctions list (the database's current one).
holdScreeningList();

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));
const FIXTURE = 'test/fixtures/sdn-sample.xml';

let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
let h: Harness;
let base: string;
let b: Book;

beforeAll(async () => {
  if (!chromiumInstalled) return;
  app = await startBrowserApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  ({ h, base } = app);
  const loaded = await loadScreeningList(
    { db: h.db, clock: h.clock },
    readFileSync(FIXTURE, 'utf8'),
    FIXTURE,
  );
  expect(loaded).toMatchObject({ ok: true });
  b = await makeBook(h, '100000');
}, 120_000);
afterAll(async () => {
  if (b) await b.ledgerSound();
  await app?.close();
});
beforeEach(({ skip }) => requireChromium(skip));

async function signedIn(token: string): Promise<BrowserContext> {
  const context = await app!.browser.newContext({
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
  });
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

/**
 * A page that fails the test on any script error or CSP refusal it logs; a form's refusal
 * (a 4xx answer swapped in place) is expected and not a problem.
 */
async function watchedPage(context: BrowserContext) {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    const refusal = /Failed to load resource: the server responded with a status of 4\d\d/.test(
      message.text(),
    );
    if (message.type() === 'error' && !refusal) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  return { page, problems };
}

const flat = async (page: Page, selector: string) =>
  ((await page.locator(selector).first().textContent()) ?? '').replace(/\s+/g, ' ').trim();

const paymentsPath = () => `${base}/app/books/${b.spaceId}/payments-out`;

describe('Payments out in a browser', () => {
  it('owner A makes a payment over an approval rule; admin B approves it and it shows executed with its ledger entry', async () => {
    expect(
      (
        await b.post(b.owner, '/approval-rules', {
          min_amount: '500',
          currency: 'USD',
          required_approvals: 1,
        })
      ).statusCode,
    ).toBe(201);
    const owner = await signedIn(b.owner.token);
    const { page, problems } = await watchedPage(owner);
    try {
      await page.goto(paymentsPath());
      expect(await flat(page, 'main')).toContain('No payments out yet');
      await shoot(page, 'payouts-empty');
      await page.click('summary:has-text("New payment")');
      await page.fill('#field-payee', 'Landlord Ltd');
      await page.fill('#field-amount', '12,5');
      await page.click('form[aria-label="New payment"] button[type="submit"]');
      await page.waitForSelector('#field-amount-error');
      expect(await page.inputValue('#field-payee')).toBe('Landlord Ltd');
      await shoot(page, 'payouts-create-error');
      await page.fill('#field-amount', '750.00');
      await page.fill('#field-note', 'November rent');
      await page.click('form[aria-label="New payment"] button[type="submit"]');
      await page.waitForURL(/payments-out\/[0-9a-f-]{36}\?done=created$/);
      expect(await flat(page, '[data-field="status"]')).toBe('Awaiting approval');
      expect(await flat(page, '[data-field="amount"]')).toBe('750.00 USD');
      expect(await flat(page, '[data-field="rule"]')).toContain('from 500.00 USD, 1 approval');
      expect(await page.locator('button:has-text("Approve")').count()).toBe(0);
      await shoot(page, 'payouts-awaiting');
      const detailUrl = page.url().replace(/\?.*$/, '');

      const admin = await signedIn(b.admin.token);
      const second = await watchedPage(admin);
      await second.page.goto(detailUrl);
      await second.page.click('button:has-text("Approve")');
      await second.page.waitForURL(/\?done=approve$/);
      expect(await flat(second.page, '[data-field="status"]')).toBe('Executed');
      expect(await flat(second.page, 'ul.approvals')).toMatch(/^Approved by Admin, /);
      expect(await flat(second.page, 'ol.history')).toMatch(
        /Created by Owner.*Awaiting approval.*Approved.*Executed/,
      );
      await shoot(second.page, 'payouts-executed');
      await second.page.click('[data-field="entry"]');
      await second.page.waitForURL(/\/ledger\/[0-9a-f-]{36}$/);
      expect(await flat(second.page, 'table.postings')).toContain('750.00 USD');
      // A viewer reads the same payment without a single control.
      const viewer = await signedIn(b.viewer.token);
      const third = await watchedPage(viewer);
      await third.page.goto(detailUrl);
      expect(await flat(third.page, '[data-field="status"]')).toBe('Executed');
      expect(await third.page.locator('main form, main button').count()).toBe(0);
      await shoot(third.page, 'payouts-viewer');
      await viewer.close();
      await page.goto(paymentsPath());
      expect(await flat(page, 'tbody tr')).toContain('Landlord Ltd');
      await shoot(page, 'payouts-list');
      expect([...problems, ...second.problems]).toEqual([]);
      await admin.close();
    } finally {
      await owner.close();
    }
  });

  it('an owner adds a policy rule on the Rules screen; a payment over it shows why it was blocked', async () => {
    const owner = await signedIn(b.owner.token);
    const { page, problems } = await watchedPage(owner);
    try {
      await page.goto(`${paymentsPath()}/rules`);
      await page.selectOption('#field-kind', 'max_per_payment');
      await page.click('form[aria-label="Add a policy rule"] button[type="submit"]');
      await page.waitForSelector('form[aria-label="Add a policy rule"] .notice.error');
      expect(await flat(page, 'form[aria-label="Add a policy rule"] #field-amount-error')).toContain(
        'needs amount',
      );
      await page.fill('form[aria-label="Add a policy rule"] #field-amount', '1000');
      await page.click('form[aria-label="Add a policy rule"] button[type="submit"]');
      await page.waitForSelector('text=Most per payment');
      expect(await flat(page, '#policy-rules + p + .table-wrap tbody')).toContain('1,000.00 USD');
      await shoot(page, 'payouts-rules');
      const blocked = (await b.pay(b.member, { amount: '1500', payee: 'Big Spender' })).json();
      expect(blocked.status).toBe('blocked');
      await page.goto(`${paymentsPath()}?status=blocked`);
      await page.click('a:has-text("Big Spender")');
      await page.waitForURL(/payments-out\/[0-9a-f-]{36}$/);
      expect(await flat(page, '[data-field="blocked-reason"]')).toBe(
        'Over the most one payment may be (a policy rule).',
      );
      await shoot(page, 'payouts-blocked');
      expect(problems).toEqual([]);
    } finally {
      await owner.close();
    }
  });

  /**
   * A transfer in from a listed sender as the account watch leaves it (booked and flagged), written
   * here directly: the chain's own test is test/chain/screening-inbound.http.test.ts.
   */
  async function flagInboundTransfer() {
    const wallet = await h.makeAccount(b.spaceId, {
      kind: 'crypto',
      name: 'Receiving wallet',
      currency: 'USDC',
      network: 'local',
      address: `0x${'5'.repeat(40)}`,
    });
    const transferId = randomUUID();
    const at = new Date();
    const where = { spaceId: b.spaceId, currency: 'USDC', at };
    const asset = await ledgerAccounts.asset(h.db, { ...where, accountId: wallet.id });
    const income = await ledgerAccounts.income(h.db, { ...where, resourceId: null });
    const amount = asAmount(250n * UNIT);
    const posted = await postEntry(
      h.db,
      {
        spaceId: b.spaceId,
        origin: 'rail',
        kind: 'income',
        occurredOn: at.toISOString().slice(0, 10),
        causeType: 'chain_transfer',
        causeId: transferId,
        counterparty: '0x1da5821544e25c636c1417ba96ade4cf6d2f9b5a',
        memo: 'Transfer with no open payment request',
        postings: [increase(asset, amount), increase(income, amount)],
      },
      at,
    );
    if (!posted.ok) throw new Error('The income entry was refused.');
    await h.db
      .insertInto('chain_transfers')
      .values({
        id: transferId,
        space_id: b.spaceId,
        account_id: wallet.id,
        network: 'eip155:31337/browser-test',
        tx_hash: `0x${'ab'.repeat(32)}`,
        log_index: 0,
        block_number: '1',
        block_hash: `0x${'cd'.repeat(32)}`,
        payer: '0x1da5821544e25c636c1417ba96ade4cf6d2f9b5a',
        amount: '250',
        source: 'watch',
        remainder_entry_id: posted.entryId,
        status: 'booked',
        created_at: at,
      })
      .execute();
    await h.db
      .insertInto('inbound_screening_flags')
      .values({
        space_id: b.spaceId,
        transfer_id: transferId,
        sdn_uid: '36216',
        listed: 'NORTHWIND MIXING SERVICES LTD.',
        programs: 'CYBER2',
        matched: '0x1da5821544e25c636c1417ba96ade4cf6d2f9b5a',
        list_source: FIXTURE,
        flagged_at: at,
      })
      .execute();
    await h.db
      .insertInto('inbound_screening_flag_entries')
      .values({ space_id: b.spaceId, entry_id: posted.entryId, transfer_id: transferId })
      .execute();
  }

  it('an owner releases a screening hold with a reason, which the payment then shows', async () => {
    const held = (await b.pay(b.member, { amount: '20', payee: 'El Tesorero' })).json();
    expect(held).toMatchObject({ status: 'blocked', blocked_reason: 'screening_hold' });
    const owner = await signedIn(b.owner.token);
    const { page, problems } = await watchedPage(owner);
    try {
      await flagInboundTransfer();
      await page.goto(`${paymentsPath()}/screening`);
      expect(await flat(page, '[data-field="published"]')).toBe('2026-11-20');
      expect(await flat(page, '[data-field="source"]')).toBe(FIXTURE);
      expect(await flat(page, '[data-field="checked"]')).toContain('(loaded)');
      expect(await flat(page, '#held ~ .table-wrap tbody')).toContain('El Tesorero');
      expect(await flat(page, '[data-field="inbound-listed"]')).toBe(
        'NORTHWIND MIXING SERVICES LTD. (CYBER2)',
      );
      await shoot(page, 'payouts-screening');
      // At 390 px the page is no wider than the screen: the inbound table stacks its rows.
      await page.setViewportSize({ width: 390, height: 844 });
      expect(
        await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth),
      ).toBeLessThanOrEqual(0);
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.click('a:has-text("Release or reject")');
      await page.waitForURL(new RegExp(`payments-out/${held.id}$`));
      expect(await flat(page, '[data-field="listed"]')).toBe('EL TESORERO');
      expect(await flat(page, '[data-field="score"]')).toBe('1.000 (the name)');
      expect(await flat(page, '[data-field="programs"]')).toBe('SDGT');
      expect(await flat(page, '[data-field="source"]')).toContain(FIXTURE);
      await shoot(page, 'payouts-held-match');
      await page.goto(`${base}/app/books/${b.spaceId}/income`);
      const row = page.locator('tbody tr', { hasText: 'Other income' }).first();
      expect(await row.locator('[data-field="listed-senders"]').textContent()).toBe('A listed sender');
      await row.locator('summary').click();
      await page.waitForSelector('tbody tr details .payments [data-field="listed-sender"]');
      expect(await flat(page, '[data-field="listed-sender"]')).toBe(
        'Listed sender NORTHWIND MIXING SERVICES LTD. (CYBER2)',
      );
      await shoot(page, 'income-listed-sender');
      await page.goto(`${paymentsPath()}/${held.id}`);
      await page.click('form#release-form button[type="submit"]');
      // The browser's own check stops an empty reason; the server says the same without it.
      expect(await page.locator('#release-form #field-reason:invalid').count()).toBe(1);
      await page.fill('#release-form #field-reason', 'Namesake: different date of birth');
      await page.click('form#release-form button[type="submit"]');
      await page.waitForURL(/\?done=release$/);
      expect(await flat(page, '[data-field="release"]')).toBe(
        'Screening hold released by Owner: “Namesake: different date of birth”',
      );
      expect(await flat(page, '[data-field="status"]')).toBe('Executed');
      await shoot(page, 'payouts-released');
      expect(problems).toEqual([]);
    } finally {
      await owner.close();
    }
  });

  it('an admin downloads a bank payment’s file and marks it executed with the bank’s reference', async () => {
    const eur = await h.makeAccount(b.spaceId, {
      kind: 'bank',
      name: 'Euro account',
      currency: 'EUR',
      opening_balance: '900',
      details: 'IBAN DE89 3704 0044 0532 0130 00, BIC COBADEFFXXX',
    });
    const contact = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${b.spaceId}/contacts`,
      session: b.owner.token,
      payload: {
        name: 'Lieferant AG',
        kind: 'company',
        addresses: [
          {
            label: 'Bank',
            address: '',
            requisites: {
              scheme: 'sepa',
              iban: 'FR14 2004 1010 0505 0001 3M02 606',
              bic: 'PSSTFRPPLIL',
              holder: 'Lieferant AG',
            },
          },
        ],
      },
    });
    expect(contact.statusCode, contact.body).toBe(201);
    const admin = await signedIn(b.admin.token);
    const { page, problems } = await watchedPage(admin);
    try {
      await page.goto(paymentsPath());
      await page.click('summary:has-text("New payment")');
      await page.selectOption('#field-account_id', eur.id);
      await page.selectOption('#field-rail', 'bank');
      await page.selectOption('#field-contact_id', contact.json().id);
      await page.fill('#field-payee', 'Lieferant AG');
      await page.fill('#field-amount', '123.45');
      await page.click('form[aria-label="New payment"] button[type="submit"]');
      await page.waitForURL(/\?done=created$/);
      expect(await flat(page, '[data-field="status"]')).toBe('Executing');
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.click('[data-field="file"]'),
      ]);
      expect(download.suggestedFilename()).toMatch(/\.xml$/);
      const xml = readFileSync((await download.path())!, 'utf8');
      expect(xml).toContain('pain.001.001.03');
      expect(xml).toContain('FR1420041010050500013M02606');
      expect(xml).toContain('123.45');
      await shoot(page, 'payouts-bank');
      await page.fill('#field-reference', 'SEPA-2026-0042');
      await page.click('form#executed-form button[type="submit"]');
      await page.waitForURL(/\?done=executed$/);
      expect(await flat(page, '[data-field="status"]')).toBe('Executed');
      expect(await flat(page, 'main')).toContain('SEPA-2026-0042');
      await page.goto(`${paymentsPath()}/transfers`);
      await shoot(page, 'payouts-transfers');
      expect(problems).toEqual([]);
    } finally {
      await admin.close();
    }
  });
});
