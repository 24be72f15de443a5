import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeAgentBook } from '../agents-setup.ts';
import type { Harness } from '../harness.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// The Agents screen as an owner meets it in Chromium: issue an agent (token shown once, wallet
// address to fund), make it active, see its proposal, reject one with a reason (the missing
// reason shown in place), approve another; a viewer sees the lists without any write control.

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));

let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
let h: Harness;
let base: string;

beforeAll(async () => {
  if (!chromiumInstalled) return;
  // Loopback URLs are admitted (as in development) so an x402 proposal can name a local port.
  app = await startBrowserApp({ env: { RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_PRIVATE: '1' } });
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
}

describe('the Agents screen', () => {
  it('issues an agent, shows its token once, and decides its proposals', async () => {
    const b = await makeAgentBook(h);
    const context = await signedIn(b.owner.token);
    const page = await context.newPage();
    // A step that waits in vain fails on its own line, well before the test's own time runs out.
    page.setDefaultTimeout(10_000);
    const path = `${base}/app/books/${b.spaceId}/agents`;
    await page.goto(path);
    await page.getByLabel('Name').fill('Expenses bot');
    await page.getByLabel('payments', { exact: true }).check();
    await page.getByLabel('Per request (USD)').fill('2');
    await page.getByLabel('Per day (USD)').fill('10');
    await page.getByLabel('Merchant 1').fill('Acme Supplies');
    await page.getByRole('button', { name: 'Issue the agent' }).click();
    const token = (await page.locator('#issued-agent-token').textContent()) ?? '';
    expect(token).toMatch(/^oat_[0-9A-Za-z]{43}$/);
    await expect(page.locator('table').last().textContent()).resolves.toContain('2.00 USD');
    await shoot(page, 'agents-issued');
    // Reloading never shows the token again.
    await page.goto(path);
    expect(await page.content()).not.toContain(token);
    // The form posts to the same page it comes back to: wait for the post's answer and for the
    // row's new state, not merely for the address (which never changes).
    const posted = (end: string) =>
      page.waitForResponse((res) => res.request().method() === 'POST' && res.url().endsWith(end));
    const activated = posted('/status');
    await page.getByRole('button', { name: 'Make active' }).click();
    expect((await activated).status()).toBe(303);
    // An observing agent offers Freeze too: the page has turned once Make active is gone.
    const botRow = page.locator('tr', { hasText: 'Expenses bot' });
    await botRow.getByRole('button', { name: 'Make active' }).waitFor({ state: 'detached' });
    expect(await botRow.locator('.pill').textContent()).toBe('Active');
    const agent = { id: '', token, wallet_address: '' };
    const first = (await b.agentPay(agent, { amount: '5' })).json();
    const second = (await b.agentPay(agent, { amount: '1.5', payee: 'Stranger' })).json();
    expect(first.applied).toBe(false);
    expect(second.applied).toBe(false);
    await page.goto(path);
    const proposals = (await page.locator('table').first().textContent()) ?? '';
    expect(proposals).toContain('5.00 USD');
    expect(proposals).toContain('per_request_usd');
    await shoot(page, 'agents-proposals');
    // Reject with a blank reason: the server's error shows beside the field, nothing is decided.
    const stranger = () => page.locator('tr', { hasText: 'Stranger' });
    await stranger().getByLabel('Reason to reject').fill('   ');
    await stranger().getByRole('button', { name: 'Reject' }).click();
    await page.locator('.error').first().waitFor();
    expect(await stranger().locator('.field .error').textContent()).toMatch(
      /^(?:Fill this in\.|Type at least \d+ characters\.)$/,
    );
    expect(await stranger().getByLabel('Reason to reject').getAttribute('aria-invalid')).toBe('true');
    await shoot(page, 'agents-reject-error');
    await stranger().getByLabel('Reason to reject').fill('Unknown payee');
    await stranger().getByRole('button', { name: 'Reject' }).click();
    await page.locator('tr', { hasText: 'Stranger' }).waitFor({ state: 'detached' });
    const approved = posted('/approve');
    await page.locator('tr', { hasText: '5.00 USD' }).getByRole('button', { name: 'Approve' }).click();
    expect((await approved).status()).toBe(303);
    await page.getByText('Nothing waits').waitFor();
    const decided = (await b.get(b.owner, '/proposals?status=rejected')).json().items;
    expect(decided).toEqual([
      expect.objectContaining({ id: second.proposal_id, reject_reason: 'Unknown payee' }),
    ]);
    expect(await b.balance()).toBe('995.00000000');
    await context.close();
  });

  it('shows a failed approval beside its proposal, which stays waiting', async () => {
    const b = await makeAgentBook(h);
    const agent = await b.issue({ perms: ['x402'], fence: { x402_hosts: [] } });
    // A port nobody listens on: the approved fetch cannot reach it.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const url = `http://127.0.0.1:${port}/paid`;
    const proposed = (await b.call(agent, 'POST', '/agent/x402', { url })).json();
    expect(proposed.applied).toBe(false);
    const context = await signedIn(b.owner.token);
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${base}/app/books/${b.spaceId}/agents`);
    const row = page.locator('tr', { hasText: url });
    const answered = page.waitForResponse(
      (res) => res.request().method() === 'POST' && res.url().endsWith('/approve'),
    );
    await row.getByRole('button', { name: 'Approve' }).click();
    expect((await answered).status()).toBe(502);
    await row.locator('.failure').waitFor();
    expect(await row.locator('.failure').textContent()).toMatch(
      /^Approving failed: The URL could not be fetched/,
    );
    await shoot(page, 'agents-approval-failed');
    const pending = (await b.get(b.owner, '/proposals?status=pending')).json().items;
    expect(pending).toEqual([expect.objectContaining({ id: proposed.proposal_id, kind: 'x402' })]);
    await context.close();
  });

  it('shows a viewer the lists without write controls, and the server refuses their writes', async () => {
    const b = await makeAgentBook(h);
    const agent = await b.issue();
    await b.agentPay(agent);
    const context = await signedIn(b.viewer.token);
    const page = await context.newPage();
    await page.goto(`${base}/app/books/${b.spaceId}/agents`);
    expect(await page.locator('table').first().textContent()).toContain('Bookkeeper bot');
    expect(await page.getByRole('button').allTextContents()).not.toEqual(
      expect.arrayContaining(['Approve', 'Reject', 'Issue the agent', 'Freeze', 'Revoke']),
    );
    await shoot(page, 'agents-viewer');
    await context.close();
  });
});
