import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from '../harness.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// Invitations in Chromium: an owner invites by email on the Members screen, a new person opens
// the mailed link, signs up on the way and joins; the owner revokes another invitation. The
// mail stays in the outbox (nothing listens at the SMTP address), where the link is read.
// Each screen is shot at 1280 and 390 pixels wide into test-results/.

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));

let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
let h: Harness;
let base: string;

beforeAll(async () => {
  if (!chromiumInstalled) return;
  app = await startBrowserApp({
    env: { RATE_LIMIT_PER_MINUTE: '100000', SMTP_URL: 'smtp://127.0.0.1:9', PUBLIC_URL: 'http://127.0.0.1' },
  });
  ({ h, base } = app);
});
afterAll(() => app?.close());
beforeEach(({ skip }) => requireChromium(skip));

async function pageAs(token: string | null): Promise<{ page: Page; problems: string[] }> {
  const context = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
  if (token) await context.addCookies([{ name: 'tb_session', value: token, url: base }]);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
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

/** The token of the link in the queued invitation mail to `email`. */
async function mailedToken(email: string): Promise<string> {
  const row = await h.db
    .selectFrom('mail_outbox')
    .select('body_text')
    .where('recipient', '=', email)
    .executeTakeFirstOrThrow();
  const link = /http:\/\/\S+/.exec(row.body_text)?.[0] ?? '';
  return new URL(link).searchParams.get('token') ?? '';
}

describe('Invitations in a browser', () => {
  it('invites on the Members screen; a new person signs up from the link and joins; another is revoked', async () => {
    const owner = await h.signup('Olive Owner');
    const spaceId = await h.createSpace(owner, { name: 'Harbour Bakery' });
    const newcomer = `newcomer-${randomBytes(3).toString('hex')}@example.com`;
    const other = `other-${randomBytes(3).toString('hex')}@example.com`;

    const { page, problems } = await pageAs(owner.token);
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${base}/app/books/${spaceId}/members`);
    const form = page.getByRole('form', { name: 'Invite by email' });
    for (const [email, role] of [
      [newcomer, 'member'],
      [other, 'viewer'],
    ] as const) {
      await form.getByLabel('Their email').fill(email);
      await form.getByLabel('Role').selectOption(role);
      await form.getByRole('button', { name: 'Send invitation' }).click();
      await page.getByRole('cell', { name: email }).waitFor();
    }
    await shoot(page, 'members-invitations');

    const guest = await pageAs(null);
    const link = `${base}/app/invitation?token=${await mailedToken(newcomer)}`;
    await guest.page.goto(link);
    await guest.page.waitForURL(/\/app\/login\?next=/);
    await guest.page.getByRole('link', { name: 'Create an account' }).click();
    await guest.page.getByLabel('Your name').fill('Nina Newcomer');
    await guest.page.getByLabel('Email').fill(newcomer);
    await guest.page.getByLabel('Password').fill('a-long-enough-password');
    await guest.page.getByRole('button', { name: 'Sign up' }).click();
    await guest.page.getByRole('button', { name: 'Join Harbour Bakery' }).waitFor();
    await shoot(guest.page, 'invitation-join');
    await guest.page.getByRole('button', { name: 'Join Harbour Bakery' }).click();
    await guest.page.waitForURL(new RegExp(`/app/books/${spaceId}/payment-requests$`));
    const joined = await h.db
      .selectFrom('members')
      .innerJoin('users', 'users.id', 'members.user_id')
      .select('members.role')
      .where('members.space_id', '=', spaceId)
      .where('users.email', '=', newcomer)
      .executeTakeFirst();
    expect(joined?.role).toBe('member');

    // The used link now explains itself.
    const used = await guest.page.goto(link);
    expect(used?.status()).toBe(410);
    await expect(guest.page.locator('main').textContent()).resolves.toContain('used already');
    await shoot(guest.page, 'invitation-used');

    await page.reload();
    const pendingTable = page.getByRole('table', { name: 'Pending invitations' });
    await expect(pendingTable.textContent()).resolves.toContain(other);
    await expect(pendingTable.textContent()).resolves.not.toContain(newcomer);
    await expect(page.getByRole('table', { name: 'Members' }).textContent()).resolves.toContain(newcomer);
    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('No pending invitations').waitFor();
    expect(problems).toEqual([]);
    // The used link's page answers 410 on purpose; Chromium logs any 4xx document as an error.
    expect(guest.problems.filter((problem) => !problem.includes('status of 410'))).toEqual([]);
  });
});
