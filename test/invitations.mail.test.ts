import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, ManualClock } from '../src/core/clock.ts';
import { createMailer, type Mailer } from '../src/platform/mail/mailer.ts';
import { drainMailOutbox } from '../src/platform/mail/outbox.ts';
import { createHarness, type Harness, type User } from './harness.ts';
import { holdMailOutbox } from './support/turns.ts';

holdMailOutbox();

// Invitations by mail, through a real SMTP server on loopback: an owner or admin invites an
// address with a role; the link (7 days, once) lets a signed-in person, or one who signs up on
// the way, join the space. The clock is moved by hand for expiry.

const clock = new ManualClock(new Date());
const PUBLIC_URL = 'https://books.example.com';
const FROM = 'Tollbook <no-reply@tollbook.test>';
let h: Harness;
let smtp: SMTPServer;
let mailer: Mailer;
const received: { to: string[]; mail: ParsedMail }[] = [];

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

const freshEmail = () => `invitee-${randomBytes(4).toString('hex')}@example.com`;

const invite = (by: User, spaceId: string, payload: Record<string, unknown>) =>
  h.inject({ method: 'POST', url: `/app/api/spaces/${spaceId}/invitations`, session: by.token, payload });
const pending = (by: User, spaceId: string) =>
  h.inject({ method: 'GET', url: `/app/api/spaces/${spaceId}/invitations`, session: by.token });
const accept = (by: User, token: string) =>
  h.inject({ method: 'POST', url: '/app/api/invitations/accept', session: by.token, payload: { token } });
const roleOf = async (spaceId: string, userId: string) =>
  (
    await h.db
      .selectFrom('members')
      .select('role')
      .where('space_id', '=', spaceId)
      .where('user_id', '=', userId)
      .executeTakeFirst()
  )?.role;

/** Sends the mail queued to `email` and returns its link's token, checking the link's shape. */
async function tokenMailedTo(email: string): Promise<string> {
  expect(await drainMailOutbox({ db: h.db, clock, mailer }, { recipients: [email] })).toBe(1);
  for (let attempt = 0; attempt < 100; attempt++) {
    const found = received.find((item) => item.to.some((to) => to.toLowerCase() === email.toLowerCase()));
    if (found) {
      received.splice(received.indexOf(found), 1);
      const link = /https:\/\/\S+/.exec(found.mail.text ?? '')?.[0] ?? '';
      expect(link.startsWith(`${PUBLIC_URL}/app/invitation?token=`)).toBe(true);
      expect(found.mail.html).toContain(link);
      expect(found.mail.subject).toMatch(/^Join .+ on Tollbook$/);
      return new URL(link).searchParams.get('token')!;
    }
    // Waiting on the SMTP server's parser to hand the message over, not on time passing.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no mail to ${email}`);
}

/** A new person signs up with `email` through the ordinary signup route. */
async function signupAs(email: string): Promise<User> {
  const password = 'a-long-enough-password';
  const response = await h.inject({
    method: 'POST',
    url: '/app/api/signup',
    payload: { email, password, name: 'Invited person' },
    remoteAddress: `2001:db8:2::${randomBytes(2).toString('hex')}`,
  });
  expect(response.statusCode, response.body).toBe(201);
  const body = response.json();
  return { id: body.user.id, email, password, token: body.session_token, csrf: body.csrf_token };
}

describe('inviting by email', () => {
  it('mails a link that lets a new person sign up and join with the role, listed as pending until then', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const email = freshEmail();
    const made = await invite(owner, spaceId, { email, role: 'admin' });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json()).toMatchObject({ email, role: 'admin', invited_by: owner.id });
    const expires = new Date(made.json().expires_at).getTime() - new Date(made.json().created_at).getTime();
    expect(expires).toBe(7 * DAY_MS);
    expect((await pending(owner, spaceId)).json().items.map((item: { email: string }) => item.email)).toEqual(
      [email],
    );
    const token = await tokenMailedTo(email);
    expect(token).toMatch(/^inv_[0-9A-Za-z]{43}$/);
    // The token is stored only as its hash.
    const stored = await h.db
      .selectFrom('space_invitations')
      .select('token_hash')
      .where('email', '=', email)
      .execute();
    expect(stored.map((row) => row.token_hash)).not.toContain(token);

    const invitee = await signupAs(email);
    const joined = await accept(invitee, token);
    expect(joined.statusCode, joined.body).toBe(200);
    expect(joined.json()).toEqual({ space_id: spaceId, role: 'admin' });
    expect(await roleOf(spaceId, invitee.id)).toBe('admin');
    expect((await pending(owner, spaceId)).json().items).toEqual([]);
  });

  it('lets a signed-in existing person join, and refuses the link a second time', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const existing = await h.signup('Existing');
    const other = await h.signup('Other');
    expect((await invite(owner, spaceId, { email: existing.email, role: 'viewer' })).statusCode).toBe(201);
    const token = await tokenMailedTo(existing.email);
    expect((await accept(existing, token)).statusCode).toBe(200);
    expect(await roleOf(spaceId, existing.id)).toBe('viewer');
    const again = await accept(other, token);
    expect(again.statusCode).toBe(422);
    expect(again.json()).toMatchObject({
      error: 'invalid_request',
      details: { field: 'token', reason: 'accepted' },
    });
    expect(await roleOf(spaceId, other.id)).toBeUndefined();
  });

  it('refuses a link older than 7 days', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const invitee = await h.signup('Late');
    await invite(owner, spaceId, { email: invitee.email, role: 'member' });
    const token = await tokenMailedTo(invitee.email);
    clock.advance(7 * DAY_MS + 1);
    try {
      const late = await accept(invitee, token);
      expect(late.statusCode).toBe(422);
      expect(late.json()).toMatchObject({ error: 'invalid_request', details: { reason: 'expired' } });
      expect(await roleOf(spaceId, invitee.id)).toBeUndefined();
      expect((await pending(owner, spaceId)).json().items).toEqual([]);
    } finally {
      clock.advance(-(7 * DAY_MS + 1));
    }
  });

  it('refuses a revoked link; inviting an address again revokes its earlier link', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const invitee = await h.signup('Invitee');
    const first = (await invite(owner, spaceId, { email: invitee.email, role: 'member' })).json();
    const firstToken = await tokenMailedTo(invitee.email);
    await invite(owner, spaceId, { email: invitee.email.toUpperCase(), role: 'member' });
    const secondToken = await tokenMailedTo(invitee.email.toUpperCase());
    const listed = (await pending(owner, spaceId)).json().items;
    expect(listed).toHaveLength(1);
    expect(listed[0].id).not.toBe(first.id);
    expect((await accept(invitee, firstToken)).json()).toMatchObject({ details: { reason: 'revoked' } });

    const revoked = await h.inject({
      method: 'DELETE',
      url: `/app/api/spaces/${spaceId}/invitations/${listed[0].id}`,
      session: owner.token,
    });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json()).toEqual({ revoked: true });
    const refused = await accept(invitee, secondToken);
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toMatchObject({ error: 'invalid_request', details: { reason: 'revoked' } });
    expect(await roleOf(spaceId, invitee.id)).toBeUndefined();
    const twice = await h.inject({
      method: 'DELETE',
      url: `/app/api/spaces/${spaceId}/invitations/${listed[0].id}`,
      session: owner.token,
    });
    expect(twice.statusCode).toBe(404);
  });
});

describe('who may invite', () => {
  it('refuses viewers and members (403) and an admin inviting an owner, and queues no mail', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const viewer = await h.signup('Viewer');
    const member = await h.signup('Member');
    const admin = await h.signup('Admin');
    await h.addMember(owner, spaceId, viewer, 'viewer');
    await h.addMember(owner, spaceId, member, 'member');
    await h.addMember(owner, spaceId, admin, 'admin');
    const email = freshEmail();
    for (const [by, role] of [
      [viewer, 'viewer'],
      [member, 'viewer'],
      [admin, 'owner'],
    ] as const) {
      const refused = await invite(by, spaceId, { email, role });
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.json().error).toBe('forbidden');
    }
    expect((await pending(viewer, spaceId)).statusCode).toBe(403);
    expect(
      await h.db.selectFrom('mail_outbox').select('id').where('recipient', '=', email).execute(),
    ).toEqual([]);
    const byAdmin = await invite(admin, spaceId, { email, role: 'admin' });
    expect(byAdmin.statusCode).toBe(201);
    await tokenMailedTo(email);
  });

  it('answers a stranger 404, bad input 422 with the spec body, a member already 409', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const stranger = await h.signup('Stranger');
    expect((await invite(stranger, spaceId, { email: freshEmail(), role: 'member' })).statusCode).toBe(404);
    const bad = await invite(owner, spaceId, { email: 'not an address', role: 'boss' });
    expect(bad.statusCode).toBe(422);
    expect(Array.isArray(bad.json().detail)).toBe(true);
    const member = await invite(owner, spaceId, { email: owner.email, role: 'member' });
    expect(member.statusCode).toBe(409);
    expect(member.json()).toMatchObject({ error: 'conflict', details: { field: 'email' } });
    const garbage = await accept(owner, 'inv_nonsense');
    expect(garbage.statusCode).toBe(422);
    expect(garbage.json()).toMatchObject({
      error: 'invalid_request',
      details: { field: 'token', reason: 'unknown' },
    });
    const anonymous = await h.inject({
      method: 'POST',
      url: '/app/api/invitations/accept',
      payload: { token: 'inv_nonsense' },
    });
    expect(anonymous.statusCode).toBe(401);
  });

  it('refuses a member already (409) and leaves the link unused', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const invitee = await h.signup('Invitee');
    await invite(owner, spaceId, { email: invitee.email, role: 'member' });
    const token = await tokenMailedTo(invitee.email);
    await h.addMember(owner, spaceId, invitee, 'viewer');
    const refused = await accept(invitee, token);
    expect(refused.statusCode).toBe(409);
    expect(await roleOf(spaceId, invitee.id)).toBe('viewer');
    expect((await pending(owner, spaceId)).json().items).toHaveLength(1);
  });
});
