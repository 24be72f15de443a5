import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AxeBuilder } from '@axe-core/playwright';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from '../harness.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// Every app page and every public page of a seeded book, in Chromium: the text a person sees
// holds no raw field names or internal words, every status chip is capitalised, axe finds no
// serious or critical accessibility violation, and each page is photographed at 1280 and
// 390 px wide (test-results/pages/).

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/pages/', import.meta.url));

/** Words and shapes that must never reach a person: field names, internal words, raw amounts. */
const FORBIDDEN: readonly [RegExp, string][] = [
  [/CLIENT_REF/, 'a raw field name'],
  [/\b[Rr]ail\b/, 'the internal word "rail"'],
  [/\b(?:equity|clearing) ·/, 'a ledger account kind'],
  [/\bpeg:[A-Z]/, 'a ledger account reference'],
  [/\d\.\d{8}\b/, 'an amount in the records’ eight-place spelling'],
  [/String should|should have at least|must NOT have|must match pattern/, 'validator wording'],
  [/\bundefined\b|\bNaN\b|\[object Object\]/, 'a program value'],
  [/\b(?:space_id|client_ref|account_id|amount_due|created_at|resource_id)\b/, 'a raw field name'],
];

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

type Seeded = { owner: { token: string }; spaceId: string; paths: string[]; publicPaths: string[] };

async function ok(res: { statusCode: number; body: string; json: () => unknown }, what: string) {
  if (res.statusCode >= 300) throw new Error(`${what} answered ${res.statusCode}: ${res.body}`);
  return res.json() as Record<string, string>;
}

/** A book with something on every screen: accounts, requests (one paid), an invoice, a payment out. */
async function seed(): Promise<Seeded> {
  const world = await h.world();
  const { owner, spaceId } = world;
  const api = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: Record<string, unknown>) =>
    h.inject({
      method,
      url: `/app/api/spaces/${spaceId}${url}`,
      session: owner.token,
      ...(payload ? { payload } : {}),
    });
  await ok(await api('PATCH', '/profile', { legal_name: 'Lemonade Stand LLC' }), 'profile');
  const bank = await h.makeAccount(spaceId, { name: 'Operating', currency: 'USD', opening_balance: '1000' });
  await h.makeWallet(spaceId);
  const mint = async (amount: string, memo: string) =>
    ok(
      await h.inject({
        method: 'POST',
        url: '/integration/payment-requests',
        key: world.key.key,
        payload: { account_id: bank.id, amount, memo },
      }),
      'request',
    );
  const paid = await mint('12.5', 'Lemons');
  const open = await mint('3', 'Sugar');
  await ok(
    await api('POST', `/payment-requests/${paid.token}/mark-paid`, { amount: '12.5', reference: 'ref 1' }),
    'paid',
  );
  const contact = await ok(
    await api('POST', '/contacts', {
      name: 'Harbour Ltd',
      email: 'pay@harbour.example',
      addresses: [
        {
          requisites: {
            scheme: 'uk',
            holder: 'Harbour Ltd',
            account_number: '12345678',
            sort_code: '112233',
          },
        },
      ],
    }),
    'contact',
  );
  const invoice = await ok(
    await api('POST', '/invoices', {
      account_id: bank.id,
      client_name: 'Late Ltd',
      issued_on: '2020-01-01',
      due_on: '2020-01-31',
      line_items: [{ description: 'Design', unit_price: '100', quantity: '2' }],
    }),
    'invoice',
  );
  const sent = await ok(await api('POST', `/invoices/${invoice.id}/send`, { via: 'none' }), 'send');
  await ok(
    await api('POST', '/approval-rules', { min_amount: '100', currency: 'USD', required_approvals: 1 }),
    'rule',
  );
  const payout = await ok(
    await api('POST', '/payments', { account_id: bank.id, rail: 'book', payee: 'Lemon Farm', amount: '150' }),
    'payout',
  );
  const subscription = await ok(
    await api('POST', '/subscriptions', { url: 'https://hooks.example.com/tollbook', events: [] }),
    'subscription',
  );
  const entry = await h.db
    .selectFrom('ledger_entries')
    .select('id')
    .where('space_id', '=', spaceId)
    .orderBy('created_at', 'desc')
    .executeTakeFirstOrThrow();
  const book = `/app/books/${spaceId}`;
  const lists = [
    '',
    '/endpoints',
    '/income',
    '/payment-requests',
    '/invoices',
    '/clients',
    '/keys',
    '/payments-out',
    '/payments-out/rules',
    '/payments-out/screening',
    '/payments-out/transfers',
    '/accounts',
    '/contacts',
    '/chats',
    '/ledger',
    '/push',
    '/agents',
    '/subscriptions',
    '/members',
    '/sites',
    '/settings',
    '/notifications',
  ];
  const details = [
    `/payment-requests/${open.token}/mark-paid`,
    '/invoices/new',
    `/invoices/${invoice.id}`,
    `/payments-out/${payout.id}`,
    `/accounts/${bank.id}`,
    `/subscriptions/${subscription.id}`,
    `/ledger/${entry.id}`,
    `/chats/${contact.id}`,
    `/contacts/${contact.id}`,
  ];
  return {
    owner,
    spaceId,
    paths: ['/app/books', ...[...lists, ...details].map((path) => `${book}${path}`)],
    publicPaths: [
      '/app/login',
      '/app/signup',
      '/app/forgot-password',
      `/pay/${open.token}`,
      `/pay/${paid.token}`,
      `/i/${sent.token ?? invoice.token}`,
    ],
  };
}

type Finding = { path: string; problem: string };

async function inspect(page: Page, path: string, name: string, findings: Finding[]) {
  const res = await page.goto(`${base}${path}`);
  if (!res || res.status() >= 400) findings.push({ path, problem: `answered ${res?.status()}` });
  // biome-ignore lint/performance/useDomNodeTextContent: the visible text is the point (textContent reads hidden text too)
  const text = await page.evaluate(() => document.body.innerText);
  for (const [pattern, what] of FORBIDDEN) {
    const found = pattern.exec(text);
    if (found) findings.push({ path, problem: `${what}: "${found[0]}"` });
  }
  for (const pill of await page.locator('.pill').allInnerTexts()) {
    if (pill && pill[0] !== pill[0]?.toUpperCase())
      findings.push({ path, problem: `a status chip in lowercase: "${pill}"` });
  }
  const axe = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  for (const violation of axe.violations) {
    if (violation.impact !== 'serious' && violation.impact !== 'critical') continue;
    const where = violation.nodes
      .map((node) => node.target.join(' '))
      .slice(0, 3)
      .join(', ');
    findings.push({ path, problem: `axe ${violation.impact} ${violation.id}: ${violation.help} (${where})` });
  }
  await page.screenshot({ path: `${RESULTS_DIR}${name}.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${RESULTS_DIR}${name}-phone.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** A stable file name: the book and any id or token in the address read as "one". */
const nameOf = (path: string, spaceId: string) =>
  path
    .replace(`/app/books/${spaceId}`, 'book')
    .replace(/[0-9a-f]{8}-[0-9a-f-]{27}|(?:pr|inv)_\w+/g, 'one')
    .replace(/[^a-z0-9]+/gi, '-')
    .replace(/^-|-$/g, '');

describe('every page, as people read it', () => {
  it('shows no raw field names or internal words, capitalised chips, and no serious axe violation', async () => {
    mkdirSync(RESULTS_DIR, { recursive: true });
    const seeded = await seed();
    const findings: Finding[] = [];
    let context: BrowserContext = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const anonymous = await context.newPage();
      for (const [index, path] of seeded.publicPaths.entries()) {
        await inspect(anonymous, path, `public-${index}-${nameOf(path, seeded.spaceId)}`, findings);
      }
      await context.close();
      context = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
      await context.addCookies([{ name: 'tb_session', value: seeded.owner.token, url: base }]);
      const page = await context.newPage();
      for (const path of seeded.paths) await inspect(page, path, nameOf(path, seeded.spaceId), findings);
    } finally {
      await context.close();
    }
    const report = findings.map((finding) => `${finding.path}: ${finding.problem}`);
    writeFileSync(`${RESULTS_DIR}findings.txt`, `${report.join('\n')}\n`);
    expect(report).toEqual([]);
  }, 300_000);
});
