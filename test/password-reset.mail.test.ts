import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import { createMailer, type Mailer } from '../src/platform/mail/mailer.ts';
import { drainMailOutbox, MAIL_RETRY_DELAYS_MS } from '../src/platform/mail/outbox.ts';
import { type SmtpFault, startSmtpFault } from './fixtures/smtp-fault.ts';
import { createHarness, type Harness, type User } from './harness.ts';
import { holdMailOutbox } from './support/turns.ts';

holdMailOutbox();

// Password reset by mail, through a real SMTP server on loopback: the link works once and for
// 30 minutes, signs every old session out, and lets a throttled owner in at once. The mail leaves
// through the mail outbox after commit, as the server's mail worker sends it.

const clock = new ManualClock(new Date());
const PUBLIC_URL = 'https://books.example.com';
let h: Harness;
let smtp: SMTPServer;
let mailer: Mailer;
const received: { to: string[]; mail: ParsedMail }[] = [];
const FROM = 'Tollbook <no-reply@tollbook.test>';

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          received.push({ to: session.envelope.rcptTo.map((rcpt) => rcpt.address), mail });
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  h = await createHarness({
    clock,
    env: { SMTP_URL: `smtp://127.0.0.1:${port}`, PUBLIC_URL, MAIL_FROM: FROM },
  });
  mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, from: FROM });
});
afterAll(async () => {
  mailer?.close();
  await h?.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

const freshAddress = () => `2001:db8:1::${randomBytes(2).toString('hex')}`;

const ask = (email: string, remoteAddress = freshAddress()) =>
  h.inject({ method: 'POST', url: '/app/api/password-reset', payload: { email }, remoteAddress });
const confirm = (token: string, password: string) =>
  h.inject({ method: 'POST', url: '/app/api/password-reset/confirm', payload: { token, password } });
const login = (email: string, password: string) =>
  h.inject({
    method: 'POST',
    url: '/app/api/login',
    payload: { email, password },
    remoteAddress: freshAddress(),
  });

/** One round of the mail worker for the outbox rows to `email` (this test's own rows only). */
const sendMailTo = (email: string, via: Mailer = mailer) =>
  drainMailOutbox({ db: h.db, clock, mailer: via }, { recipients: [email.toLowerCase()] });

/** The outbox rows to `email`, oldest first. */
const outboxTo = (email: string) =>
  h.db
    .selectFrom('mail_outbox')
    .select(['state', 'attempts', 'message_id', 'last_error'])
    .where('recipient', '=', email.toLowerCase())
    .orderBy('created_at')
    .execute();

/** Sends the mail queued to `email` (after the answer) and returns its link's token. */
async function tokenMailedTo(email: string): Promise<string> {
  expect(await sendMailTo(email)).toBe(1);
  for (let attempt = 0; attempt < 100; attempt++) {
    const found = received.find((item) => item.to.includes(email.toLowerCase()));
    if (found) {
      received.splice(received.indexOf(found), 1);
      const link = /https:\/\/\S+/.exec(found.mail.text ?? '')?.[0] ?? '';
      expect(link.startsWith(`${PUBLIC_URL}/app/reset-password?token=`)).toBe(true);
      expect(found.mail.html).toContain(link.replace(/&/g, '&amp;'));
      return new URL(link).searchParams.get('token')!;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no mail to ${email}`);
}

describe('POST /app/api/password-reset', () => {
  it('answers 202 with the same words whether or not the address has an account, and mails only an account', async () => {
    const owner = await h.signup('Owner');
    const known = await ask(owner.email);
    const nobody = `nobody-${randomBytes(4).toString('hex')}@example.com`;
    const unknown = await ask(nobody);
    expect(known.statusCode).toBe(202);
    expect(unknown.statusCode).toBe(202);
    expect(unknown.json()).toEqual(known.json());
    const token = await tokenMailedTo(owner.email);
    expect(token).toMatch(/^pwr_[0-9A-Za-z]{43}$/);
    // No mail was even queued for the address without an account.
    expect(await outboxTo(nobody)).toEqual([]);
    expect(await sendMailTo(nobody)).toBe(0);
    expect(received.filter((item) => item.to.some((to) => to.startsWith('nobody-')))).toEqual([]);
  });

  it('refuses to flood one inbox: three asks an hour, then 429', async () => {
    const owner = await h.signup('Owner');
    const statuses = [];
    for (let index = 0; index < 5; index++) statuses.push((await ask(owner.email)).statusCode);
    expect(statuses).toEqual([202, 202, 202, 429, 429]);
  });
});

describe('POST /app/api/password-reset/confirm', () => {
  async function resetFor(owner: User) {
    await ask(owner.email);
    return tokenMailedTo(owner.email);
  }

  it('sets the new password once, signs every old session out, and refuses the link the second time', async () => {
    const owner = await h.signup('Owner');
    const token = await resetFor(owner);
    const done = await confirm(token, 'a-brand-new-password');
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toEqual({ reset: true });
    expect((await h.inject({ method: 'GET', url: '/app/api/me', session: owner.token })).statusCode).toBe(
      401,
    );
    expect((await login(owner.email, owner.password)).statusCode).toBe(401);
    expect((await login(owner.email, 'a-brand-new-password')).statusCode).toBe(200);
    const again = await confirm(token, 'another-new-password');
    expect(again.statusCode).toBe(422);
    expect(again.json()).toMatchObject({ error: 'invalid_request', details: { field: 'token' } });
  });

  it('refuses a link older than 30 minutes, a forged one and a too-short password', async () => {
    const owner = await h.signup('Owner');
    const token = await resetFor(owner);
    expect((await confirm(token, 'short')).statusCode).toBe(422);
    expect((await confirm(`pwr_${'A'.repeat(43)}`, 'a-brand-new-password')).statusCode).toBe(422);
    expect((await confirm('not-a-token', 'a-brand-new-password')).statusCode).toBe(422);
    clock.advance(30 * 60 * 1000 + 1000);
    expect((await confirm(token, 'a-brand-new-password')).statusCode).toBe(422);
    expect((await login(owner.email, owner.password)).statusCode).toBe(200);
  });

  it('lets exactly one of two concurrent uses of a link win', async () => {
    const owner = await h.signup('Owner');
    const token = await resetFor(owner);
    const answers = await Promise.all([
      confirm(token, 'first-new-password'),
      confirm(token, 'second-new-password'),
    ]);
    expect(answers.map((res) => res.statusCode).sort()).toEqual([200, 422]);
    const winner = answers[0]!.statusCode === 200 ? 'first-new-password' : 'second-new-password';
    expect((await login(owner.email, winner)).statusCode).toBe(200);
  });

  it('lets an owner locked out by wrong guesses in at once', async () => {
    const owner = await h.signup('Owner');
    for (let index = 0; index < 8; index++) await login(owner.email, 'guess');
    expect((await login(owner.email, owner.password)).statusCode).toBe(429);
    const token = await resetFor(owner);
    expect((await confirm(token, 'a-brand-new-password')).statusCode).toBe(200);
    expect((await login(owner.email, 'a-brand-new-password')).statusCode).toBe(200);
  });
});

describe('the reset pages as plain form posts (no JavaScript)', () => {
  const form = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    h.inject({
      method: 'POST',
      url,
      payload: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      remoteAddress: freshAddress(),
    });

  it('asks for a link, opens it, sets the password and logs in with it', async () => {
    const owner = await h.signup('Owner');
    const asked = await form('/app/forgot-password', { _csrf: '', email: owner.email });
    expect(asked.statusCode).toBe(303);
    expect(asked.headers.location).toBe('/app/forgot-password/sent');
    const token = await tokenMailedTo(owner.email);

    const opened = await h.inject({ method: 'GET', url: `/app/reset-password?token=${token}` });
    expect(opened.statusCode).toBe(200);
    expect(opened.headers['referrer-policy']).toBe('no-referrer');
    expect(opened.body).toContain(`name="token" value="${token}"`);

    const differ = await form('/app/reset-password', {
      token,
      password: 'new password one',
      password_confirm: 'new password two',
    });
    expect(differ.statusCode).toBe(422);
    expect(differ.headers['referrer-policy']).toBe('no-referrer');
    expect(differ.body).toContain('The two passwords differ');

    const set = await form('/app/reset-password', {
      token,
      password: 'new password one',
      password_confirm: 'new password one',
    });
    expect(set.statusCode).toBe(303);
    expect(set.headers.location).toBe('/app/reset-password/done');
    expect((await login(owner.email, 'new password one')).statusCode).toBe(200);
    expect((await login(owner.email, owner.password)).statusCode).toBe(401);

    // The same form sent again: the link was used, and the page says so.
    const again = await form('/app/reset-password', {
      token,
      password: 'new password three',
      password_confirm: 'new password three',
    });
    expect(again.statusCode).toBe(410);
    expect(again.body).toContain('This link was already used');
    expect((await login(owner.email, 'new password three')).statusCode).toBe(401);
  });

  it('says an expired link expired, and a garbled one does not work', async () => {
    const owner = await h.signup('Owner');
    expect((await form('/app/forgot-password', { email: owner.email })).statusCode).toBe(303);
    const token = await tokenMailedTo(owner.email);
    clock.advance(30 * 60 * 1000 + 1000);
    const expired = await h.inject({ method: 'GET', url: `/app/reset-password?token=${token}` });
    expect(expired.statusCode).toBe(410);
    expect(expired.headers['referrer-policy']).toBe('no-referrer');
    expect(expired.body).toContain('This link has expired');
    expect(expired.body).toContain('Send me a new link');
    for (const url of [
      '/app/reset-password',
      '/app/reset-password?token=pwr_short',
      `/app/reset-password?token=${token}x`,
    ]) {
      const garbled = await h.inject({ method: 'GET', url });
      expect(garbled.statusCode, url).toBe(404);
      expect(garbled.body).toContain('This link does not work');
    }
  });

  it('refuses a request for a link sent from another site, and mails nothing', async () => {
    const owner = await h.signup('Owner');
    const forged = await form(
      '/app/forgot-password',
      { email: owner.email },
      { origin: 'https://evil.example' },
    );
    expect(forged.statusCode).toBe(403);
    expect(await outboxTo(owner.email)).toEqual([]);
    expect(await sendMailTo(owner.email)).toBe(0);
    expect(received.some((item) => item.to.includes(owner.email.toLowerCase()))).toBe(false);
  });
});

describe('the reset mail while the mail server is down', () => {
  let fault: SmtpFault;
  let faultMailer: Mailer;
  beforeAll(async () => {
    fault = await startSmtpFault('refuse-421');
    // A short silence bound, so the `hang` step ends quickly.
    faultMailer = createMailer({ smtpUrl: fault.url, from: FROM, timeoutMs: 1_000 });
  });
  afterAll(async () => {
    faultMailer?.close();
    await fault?.close();
  });

  it('answers at once, keeps the link queued through refusals and silence, and delivers it once after', async () => {
    const owner = await h.signup('Owner');
    const asked = await ask(owner.email);
    expect(asked.statusCode).toBe(202);
    const [queued] = await outboxTo(owner.email);
    expect(queued).toMatchObject({ state: 'pending', attempts: 0 });

    for (const [index, mode] of (['refuse-421', 'refuse-451', 'hang'] as const).entries()) {
      fault.mode = mode;
      expect(await sendMailTo(owner.email, faultMailer)).toBe(0);
      const [row] = await outboxTo(owner.email);
      expect(row, mode).toMatchObject({
        state: 'pending',
        attempts: index + 1,
        message_id: queued!.message_id,
      });
      expect(row!.last_error).not.toBe('');
      // Not due again before its back-off: a round now sends nothing and counts no attempt.
      expect(await sendMailTo(owner.email, faultMailer)).toBe(0);
      expect((await outboxTo(owner.email))[0]!.attempts).toBe(index + 1);
      clock.advance(MAIL_RETRY_DELAYS_MS[index]!);
    }
    expect(fault.received).toEqual([]);

    fault.mode = 'accept';
    expect(await sendMailTo(owner.email, faultMailer)).toBe(1);
    expect(await sendMailTo(owner.email, faultMailer)).toBe(0);
    expect(fault.received).toHaveLength(1);
    const [mail] = fault.received;
    expect(mail!.envelopeTo).toEqual([owner.email.toLowerCase()]);
    expect(mail!.mail.messageId).toBe(queued!.message_id);
    expect(await outboxTo(owner.email)).toMatchObject([{ state: 'sent', attempts: 4 }]);

    // The link it carries works.
    const link = /https:\/\/\S+/.exec(mail!.mail.text ?? '')?.[0] ?? '';
    const token = new URL(link).searchParams.get('token')!;
    expect((await confirm(token, 'after-the-outage')).statusCode).toBe(200);
    expect((await login(owner.email, 'after-the-outage')).statusCode).toBe(200);
  }, 60_000);
});
