import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { type ParsedMail, simpleParser } from 'mailparser';
import type { Browser, Page } from 'playwright-core';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMailer, type Mailer } from '../../src/platform/mail/mailer.ts';
import { drainMailOutbox } from '../../src/platform/mail/outbox.ts';
import type { Harness } from '../harness.ts';
import { holdMailOutbox } from '../support/turns.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

holdMailOutbox();

// A locked-out owner finds their way back as a person would: "Forgot your password?" on the log
// in page, the mail arriving at a real SMTP server on loopback, its link opened in Chromium, a
// new password typed twice, then logging in with it. The old password stops working and the
// link works once. Every page is screenshot at desktop and phone width into test-results/.

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/password-reset/', import.meta.url));
const PUBLIC_URL = 'https://books.example.test';
const OLD_PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a brand new passphrase';

let h: Harness;
let browser: Browser | undefined;
let base: string;
let smtp: SMTPServer;
let mailer: Mailer;
const inbox: ParsedMail[] = [];
const consoleErrors: string[] = [];

async function shoot(page: Page, name: string) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  for (const [suffix, width] of [
    ['desktop', 1200],
    ['phone', 390],
  ] as const) {
    await page.setViewportSize({ width, height: 800 });
    await page.screenshot({ path: `${RESULTS_DIR}${name}-${suffix}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1200, height: 800 });
}

/** Runs the mail worker for `address` (as the server's send-mail task does) and waits for its mail. */
async function mailTo(address: string, timeoutMs = 10_000): Promise<ParsedMail> {
  await drainMailOutbox({ db: h.db, clock: h.clock, mailer }, { recipients: [address.toLowerCase()] });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mail = inbox.find((candidate) => candidate.to && JSON.stringify(candidate.to).includes(address));
    if (mail) return mail;
    if (Date.now() > deadline) throw new Error(`no mail reached ${address}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('password reset in a browser', () => {
  let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
  let page: Page;
  const email = `locked-out-${randomUUID()}@example.com`;
  let linkPath = '';

  beforeAll(async () => {
    if (!chromiumInstalled) return;
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, _session, callback) {
        simpleParser(stream)
          .then((mail) => {
            inbox.push(mail);
            callback();
          })
          .catch(callback);
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    app = await startBrowserApp({
      env: {
        SMTP_URL: `smtp://127.0.0.1:${port}`,
        MAIL_FROM: 'Tollbook <no-reply@tollbook.test>',
        PUBLIC_URL,
      },
    });
    ({ browser, h, base } = app);
    mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, from: 'Tollbook <no-reply@tollbook.test>' });
    const context = await browser!.newContext({ viewport: { width: 1200, height: 800 } });
    page = await context.newPage();
    page.on('console', (message) => {
      if (
        message.type() === 'error' &&
        !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())
      )
        consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: ${error.message}`));
    const signup = await h.inject({
      method: 'POST',
      url: '/app/api/signup',
      payload: { email, password: OLD_PASSWORD, name: 'Lou Lockedout' },
    });
    expect(signup.statusCode).toBe(201);
  });
  afterAll(async () => {
    mailer?.close();
    await app?.close();
    if (smtp) await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });
  beforeEach(({ skip }) => requireChromium(skip));

  it('asks for a link from the log in page and answers the same for any address', async () => {
    await page.goto(`${base}/app/login`);
    await shoot(page, '1-login');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.waitForURL(/\/app\/forgot-password$/);
    await shoot(page, '2-forgot');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send me a link' }).click();
    await page.waitForURL(/\/app\/forgot-password\/sent$/);
    const sent = await page.getByRole('status').textContent();
    expect(sent).toContain('If an account uses that address, a link to choose a new password is on its way');
    await shoot(page, '3-sent');

    // An address without an account gets the very same page, and no mail.
    const nobody = `nobody-${randomUUID()}@example.com`;
    await page.goto(`${base}/app/forgot-password`);
    await page.getByLabel('Email').fill(nobody);
    await page.getByRole('button', { name: 'Send me a link' }).click();
    await page.waitForURL(/\/app\/forgot-password\/sent$/);
    expect(await page.getByRole('status').textContent()).toBe(sent);
    await expect(mailTo(nobody, 500)).rejects.toThrow('no mail');

    // A malformed address is refused in place, with the field's own message.
    await page.goto(`${base}/app/forgot-password`);
    await page.getByLabel('Email').fill('not-an-address');
    await page.locator('#field-email').evaluate((input) => input.setAttribute('type', 'text'));
    await page.getByRole('button', { name: 'Send me a link' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.locator('#field-email-error').textContent()).toMatch(/\S/);
    expect(await page.locator('#field-email').inputValue()).toBe('not-an-address');
    await shoot(page, '2b-forgot-refused');
  });

  it('mails a link that opens a page to choose the password twice, without leaking the token', async () => {
    const mail = await mailTo(email);
    expect(mail.subject).toBe('Set a new Tollbook password');
    const link = /https?:\/\/\S+\/app\/reset-password\?token=\S+/.exec(mail.text ?? '')?.[0];
    expect(link).toMatch(new RegExp(`^${PUBLIC_URL}/app/reset-password\\?token=pwr_[0-9A-Za-z]{43}$`));
    const url = new URL(link!);
    linkPath = `${url.pathname}${url.search}`;

    const answer = await page.goto(`${base}${linkPath}`);
    expect(answer?.status()).toBe(200);
    expect(answer?.headers()['referrer-policy']).toBe('no-referrer');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Choose a new password');
    await shoot(page, '4-choose');

    // Two different passwords: refused in place, and the link still works.
    await page.getByLabel('New password').fill(NEW_PASSWORD);
    await page.getByLabel('The same password again').fill(`${NEW_PASSWORD}!`);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.locator('#field-password_confirm-error').textContent()).toContain(
      'The two passwords differ',
    );
    await shoot(page, '5-mismatch');

    // Too short: the field says why.
    await page.getByLabel('New password').fill('short');
    await page.getByLabel('The same password again').fill('short');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.locator('#field-password-error').waitFor();
    expect(await page.locator('#field-password-error').textContent()).toMatch(/10/);

    await page.getByLabel('New password').fill(NEW_PASSWORD);
    await page.getByLabel('The same password again').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.waitForURL(/\/app\/reset-password\/done$/);
    expect(await page.getByRole('status').textContent()).toContain('Log in with it now');
    await shoot(page, '6-done');
  });

  it('logs in with the new password; the old one no longer works', async () => {
    await page.getByRole('link', { name: 'Log in' }).click();
    await page.waitForURL(/\/app\/login$/);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(OLD_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').waitFor();
    expect(page.url()).toMatch(/\/app\/login$/);
    await page.getByLabel('Password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/app\/books$/);
    expect(await page.getByText('Lou Lockedout').isVisible()).toBe(true);
  });

  it('asks for a link with JavaScript off: the plain form post gets the same page', async () => {
    const context = await browser!.newContext({
      javaScriptEnabled: false,
      viewport: { width: 390, height: 800 },
    });
    try {
      const plain = await context.newPage();
      await plain.goto(`${base}/app/login`);
      await plain.getByRole('link', { name: 'Forgot your password?' }).click();
      await plain.waitForURL(/\/app\/forgot-password$/);
      await plain.getByLabel('Email').fill(`nobody-${randomUUID()}@example.com`);
      await plain.getByRole('button', { name: 'Send me a link' }).click();
      await plain.waitForURL(/\/app\/forgot-password\/sent$/);
      expect(await plain.getByRole('status').textContent()).toContain(
        'a link to choose a new password is on its way',
      );
    } finally {
      await context.close();
    }
  });

  it('says a link opened a second time was used, and offers a new one', async () => {
    const answer = await page.goto(`${base}${linkPath}`);
    expect(answer?.status()).toBe(410);
    expect(answer?.headers()['referrer-policy']).toBe('no-referrer');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('This link was already used');
    expect(await page.getByRole('alert').textContent()).toContain('works once');
    expect(await page.getByRole('button', { name: 'Send me a new link' }).isVisible()).toBe(true);
    await shoot(page, '7-used');

    // A garbled link says so too; the form on the page asks for a new link.
    const garbled = await page.goto(`${base}/app/reset-password?token=${linkPath.slice(-43, -5)}`);
    expect(garbled?.status()).toBe(404);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('This link does not work');
    await shoot(page, '8-garbled');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send me a new link' }).click();
    await page.waitForURL(/\/app\/forgot-password\/sent$/);
    expect(consoleErrors).toEqual([]);
  });
});
