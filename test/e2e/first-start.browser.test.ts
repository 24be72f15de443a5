import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chromiumInstalled, launchChromium, requireChromium } from './browser.ts';

// The first start as a new user meets it: `npm start`'s own entry (src/main.ts, run by tsx) on an
// empty data directory prints the demo block once; the web app address and the login it names
// open the app in Chromium, and the printed key mints a request the app then lists. The two
// screenshots the README shows (docs/app-*.png) are taken from this run.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = join(ROOT, 'test-results/first-start/');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Reads the server's output until the demo block is whole, or fails with what it printed. */
function demoBlock(child: ChildProcess, timeoutMs = 90_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error(`no demo block within ${timeoutMs} ms:\n${out}`)),
      timeoutMs,
    );
    const take = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (/API docs: .*\n/.test(out)) {
        clearTimeout(timer);
        resolve(out);
      }
    };
    child.stdout?.on('data', take);
    child.stderr?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}) before printing the demo block:\n${out}`));
    });
  });
}

function line(block: string, label: string): string {
  const match = new RegExp(`^\\s*${label}:\\s+(.+)$`, 'm').exec(block);
  if (!match) throw new Error(`the demo block has no "${label}" line:\n${block}`);
  return match[1]!.trim();
}

describe('the first start, as a new user meets it', () => {
  let child: ChildProcess | undefined;
  let browser: Browser | undefined;
  let dataDir = '';
  let block = '';
  let port = 0;

  beforeAll(async () => {
    if (!chromiumInstalled) return;
    dataDir = mkdtempSync(join(tmpdir(), 'tollbook-first-start-'));
    port = await freePort();
    // What `npm start` runs (tsx src/main.ts), on an empty data directory; no local chain, so the
    // test needs no anvil.
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'development',
        DATABASE_URL: '',
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_URL: '',
        CHAIN: '0',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    block = await demoBlock(child);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  beforeEach(({ skip }) => requireChromium(skip));

  async function shoot(page: Page, name: string) {
    mkdirSync(RESULTS_DIR, { recursive: true });
    await page.screenshot({ path: `${RESULTS_DIR}${name}.png`, fullPage: true });
  }

  it('prints the app address and a login that opens the demo book; the printed key mints a request the app lists', async () => {
    const appUrl = line(block, 'Web app').split(/\s/)[0]!;
    expect(appUrl).toBe(`http://localhost:${port}/app`);
    const [email, password] = line(block, 'App login').split(' / ');
    const key = line(block, 'Integration key');
    expect(email).toBe('demo@tollbook.local');
    expect(key).toMatch(/^oit_/);

    const context = await browser!.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    // The printed address's path, on this machine by its IP address: tests name no host.
    const base = `http://127.0.0.1:${port}`;
    await page.goto(`${base}${new URL(appUrl).pathname}`);
    expect(page.url()).toContain('/app/login');
    await page.getByLabel('Email').fill(email!);
    await page.getByLabel('Password').fill(password!);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/app\/books\/[0-9a-f-]{36}$/);
    expect(await page.locator('#book-switch option:checked').textContent()).toBe('Demo space');
    const bookId = /\/app\/books\/([0-9a-f-]{36})$/.exec(page.url())![1]!;

    // An account to be paid into, made on the Accounts screen.
    await page.goto(`${base}/app/books/${bookId}/accounts`);
    await page.getByLabel('Kind').selectOption('bank');
    await page.getByLabel('Name', { exact: true }).fill('Main bank account');
    await page.getByLabel('Currency').fill('EUR');
    await page.getByRole('button', { name: 'Create the account' }).click();
    await page.locator('table').getByText('Main bank account').waitFor();
    const accounts = await fetch(`${base}/integration/accounts`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const accountId = ((await accounts.json()) as { items: { id: string }[] }).items[0]!.id;
    for (const [memo, amount] of [
      ['Website redesign, deposit', '1200'],
      ['Support plan, November', '49.9'],
      ['API usage, October', '2'],
    ] as const) {
      const minted = await fetch(`${base}/integration/payment-requests`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ account_id: accountId, amount, memo }),
      });
      expect(minted.status).toBe(201);
    }
    await page.getByRole('link', { name: 'Payment requests' }).click();
    await page.waitForURL(/\/payment-requests$/);
    const row = page.locator('tr', { hasText: 'Support plan, November' });
    expect(await row.getByText('49.90 EUR').isVisible()).toBe(true);
    expect(
      await page.locator('tr', { hasText: 'Website redesign' }).getByText('1,200.00 EUR').isVisible(),
    ).toBe(true);
    await shoot(page, 'app-payment-requests');

    // A second key, shown once with its copy button.
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Production server');
    await page.getByLabel('payments').check();
    await page.getByRole('button', { name: 'Issue the key' }).click();
    await page.locator('#issued-key').waitFor();
    expect(await page.getByText('you will not see this again').first().isVisible()).toBe(true);
    await shoot(page, 'app-key-issued');
    await context.close();
  });
});
