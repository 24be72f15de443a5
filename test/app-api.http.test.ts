import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, ManualClock } from '../src/core/clock.ts';
import { remindExpiringKeys } from '../src/features/keys/index.ts';
import { sha256Hex } from '../src/platform/crypto.ts';
import { createHarness, type Harness } from './harness.ts';

let h: Harness;
const clock = new ManualClock(new Date());
beforeAll(async () => {
  h = await createHarness({ clock });
});
afterAll(() => h.close());

describe('signup and login', () => {
  it('signs up, stores an argon2id hash (never the password), and logs in with the same password', async () => {
    const user = await h.signup();
    const row = await h.db
      .selectFrom('users')
      .select('password_hash')
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(row.password_hash.startsWith('$argon2id$')).toBe(true);
    expect(row.password_hash).not.toContain(user.password);
    const login = await h.inject({
      method: 'POST',
      url: '/app/api/login',
      payload: { email: user.email.toUpperCase(), password: user.password },
    });
    expect(login.statusCode).toBe(200);
    expect(login.json().session_token).toMatch(/^ses_[0-9A-Za-z]{43}$/);
    const me = await h.inject({ method: 'GET', url: '/app/api/me', session: login.json().session_token });
    expect(me.json()).toMatchObject({ id: user.id, email: user.email });
  });

  it('refuses a wrong password and an unknown email with the same answer', async () => {
    const user = await h.signup();
    const wrong = await h.inject({
      method: 'POST',
      url: '/app/api/login',
      payload: { email: user.email, password: 'not-the-password' },
    });
    const unknown = await h.inject({
      method: 'POST',
      url: '/app/api/login',
      payload: { email: 'nobody@example.com', password: 'whatever-x' },
    });
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.body).toBe(unknown.body);
  });

  it('refuses a second signup with the same email, whatever its case, even when both race', async () => {
    const email = `race-${Date.now()}@example.com`;
    const answers = await Promise.all(
      [email, email.toUpperCase()].map((address) =>
        h.inject({
          method: 'POST',
          url: '/app/api/signup',
          payload: { email: address, password: 'long-enough-pw', name: 'A' },
        }),
      ),
    );
    expect(answers.map((res) => res.statusCode).sort()).toEqual([201, 409]);
  });

  it('validates signup fields', async () => {
    const res = await h.inject({
      method: 'POST',
      url: '/app/api/signup',
      payload: { email: 'not-an-email', password: 'short', name: '' },
    });
    expect(res.statusCode).toBe(422);
    const types = res
      .json()
      .detail.map((item: { loc: string[]; type: string }) => `${item.loc[1]}:${item.type}`);
    expect(types).toEqual(
      expect.arrayContaining(['email:value_error', 'password:string_too_short', 'name:string_too_short']),
    );
  });

  it('ends a session at logout', async () => {
    const user = await h.signup();
    expect((await h.inject({ method: 'POST', url: '/app/api/logout', session: user.token })).statusCode).toBe(
      200,
    );
    expect((await h.inject({ method: 'GET', url: '/app/api/me', session: user.token })).statusCode).toBe(401);
  });

  it('lets a browser use the httpOnly cookie, but refuses a cookie write without the CSRF token', async () => {
    const email = `cookie-${Date.now()}@example.com`;
    const signup = await h.inject({
      method: 'POST',
      url: '/app/api/signup',
      payload: { email, password: 'long-enough-pw', name: 'C' },
    });
    const cookie = signup.cookies.find((c) => c.name === 'tb_session')!;
    expect(cookie.httpOnly).toBe(true);
    expect(cookie.sameSite).toBe('Lax');
    const cookies = { tb_session: cookie.value };
    expect((await h.app.inject({ method: 'GET', url: '/app/api/me', cookies })).statusCode).toBe(200);
    const payload = { name: 'Cookie space', base_currency: 'EUR' };
    const forged = await h.app.inject({ method: 'POST', url: '/app/api/spaces', cookies, payload });
    expect(forged.statusCode).toBe(403);
    const real = await h.app.inject({
      method: 'POST',
      url: '/app/api/spaces',
      cookies,
      payload,
      headers: { 'x-csrf-token': signup.json().csrf_token },
    });
    expect(real.statusCode).toBe(201);
  });
});

describe('spaces and members', () => {
  it('creates a space owned by its creator, with plan and rollout switches', async () => {
    const owner = await h.signup();
    const res = await h.inject({
      method: 'POST',
      url: '/app/api/spaces',
      session: owner.token,
      payload: { name: 'Acme Ltd.', base_currency: 'eur' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      name: 'Acme Ltd.',
      base_currency: 'EUR',
      plan: 'free',
      role: 'owner',
      integration_enabled: true,
      payments_enabled: true,
    });
    expect(res.json().public_handle).toMatch(/^acme-ltd-[0-9a-f]{6}$/);
  });

  it('hides a space from people who are not members (404)', async () => {
    const owner = await h.signup();
    const stranger = await h.signup();
    const spaceId = await h.createSpace(owner);
    for (const url of [
      `/app/api/spaces/${spaceId}`,
      `/app/api/spaces/${spaceId}/members`,
      `/app/api/spaces/${spaceId}/keys`,
    ]) {
      const res = await h.inject({ method: 'GET', url, session: stranger.token });
      expect(res.statusCode, url).toBe(404);
    }
  });

  it('lets owners and admins manage members, never an admin an owner, and never drops the last owner', async () => {
    const owner = await h.signup();
    const admin = await h.signup();
    const member = await h.signup();
    const spaceId = await h.createSpace(owner);
    await h.addMember(owner, spaceId, admin, 'admin');
    const addAs = (actor: { token: string }, email: string, role: string) =>
      h.inject({
        method: 'POST',
        url: `/app/api/spaces/${spaceId}/members`,
        session: actor.token,
        payload: { email, role },
      });
    expect((await addAs(admin, member.email, 'owner')).statusCode).toBe(403);
    expect((await addAs(admin, member.email, 'member')).statusCode).toBe(201);
    expect((await addAs(admin, member.email, 'viewer')).statusCode).toBe(409);
    const neverSignedUp = `never-${Date.now()}-${Math.random()}@example.com`;
    expect((await addAs(admin, neverSignedUp, 'viewer')).json().error).toBe('user_not_found');
    const patch = (actor: { token: string }, userId: string, role: string) =>
      h.inject({
        method: 'PATCH',
        url: `/app/api/spaces/${spaceId}/members/${userId}`,
        session: actor.token,
        payload: { role },
      });
    expect((await patch(admin, owner.id, 'viewer')).statusCode).toBe(403);
    expect((await patch(member, admin.id, 'viewer')).statusCode).toBe(403);
    const lastOwner = await patch(owner, owner.id, 'admin');
    expect(lastOwner.statusCode).toBe(422);
    expect(lastOwner.json().error).toBe('last_owner');
    const members = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${spaceId}/members`,
      session: member.token,
    });
    expect(
      members
        .json()
        .items.map((m: { role: string }) => m.role)
        .sort(),
    ).toEqual(['admin', 'member', 'owner']);
  });

  it('lets only the owner change the plan; admins may flip the rollout switches', async () => {
    const owner = await h.signup();
    const admin = await h.signup();
    const spaceId = await h.createSpace(owner);
    await h.addMember(owner, spaceId, admin, 'admin');
    const patch = (actor: { token: string }, payload: object) =>
      h.inject({ method: 'PATCH', url: `/app/api/spaces/${spaceId}`, session: actor.token, payload });
    expect((await patch(admin, { plan: 'enterprise' })).statusCode).toBe(403);
    expect((await patch(admin, { payments_enabled: false })).json().payments_enabled).toBe(false);
    expect((await patch(owner, { plan: 'scale' })).json().plan).toBe('scale');
  });
});

describe('integration keys', () => {
  it('issues a key shown once: only its SHA-256 hash and a prefix are stored, the secret only sealed', async () => {
    const { owner, spaceId, key } = await h.world({ webhook_url: 'https://hooks.example.com/tollbook' });
    expect(key.key).toMatch(/^oit_[0-9A-Za-z]{43}$/);
    expect(key.webhookSecret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
    const row = await h.db
      .selectFrom('integration_keys')
      .selectAll()
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(sha256Hex(key.key));
    expect(row.prefix).toBe(key.key.slice(0, 12));
    expect(JSON.stringify(row)).not.toContain(key.key);
    expect(JSON.stringify(row)).not.toContain(key.webhookSecret);
    expect(h.deps.secrets.open(row.webhook_secret_sealed)).toBe(key.webhookSecret);
    const list = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${spaceId}/keys`,
      session: owner.token,
    });
    expect(list.body).not.toContain(key.key);
    expect(list.body).not.toContain(key.webhookSecret);
    expect(list.json().items[0]).toMatchObject({
      id: key.id,
      status: 'active',
      webhook_url: 'https://hooks.example.com/tollbook',
    });
  });

  it('generates a webhook secret even when no address is given', async () => {
    const { key } = await h.world();
    expect(key.webhookSecret).toMatch(/^whsec_/);
  });

  it('lets only owners and admins issue keys', async () => {
    const owner = await h.signup();
    const member = await h.signup();
    const spaceId = await h.createSpace(owner);
    await h.addMember(owner, spaceId, member, 'member');
    const res = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/keys`,
      session: member.token,
      payload: { name: 'k', scopes: ['payments'] },
    });
    expect(res.statusCode).toBe(403);
  });

  it('holds at most ten live keys per space, also when eleven issues race; revoking frees a place', async () => {
    const owner = await h.signup();
    const spaceId = await h.createSpace(owner);
    const issue = () =>
      h.inject({
        method: 'POST',
        url: `/app/api/spaces/${spaceId}/keys`,
        session: owner.token,
        payload: { name: 'k', scopes: ['payments'] },
      });
    const answers = await Promise.all(Array.from({ length: 11 }, issue));
    expect(answers.filter((res) => res.statusCode === 201)).toHaveLength(10);
    const refused = answers.find((res) => res.statusCode === 422)!;
    expect(refused.json().error).toBe('key_limit_reached');
    const keyId = answers.find((res) => res.statusCode === 201)!.json().id;
    await h.inject({
      method: 'DELETE',
      url: `/app/api/spaces/${spaceId}/keys/${keyId}`,
      session: owner.token,
    });
    expect((await issue()).statusCode).toBe(201);
  });

  it('binds a transactions key to a push source and gives it a lifetime (default 90 days)', async () => {
    const owner = await h.signup();
    const spaceId = await h.createSpace(owner);
    const issue = (payload: object) =>
      h.inject({ method: 'POST', url: `/app/api/spaces/${spaceId}/keys`, session: owner.token, payload });
    const missing = await issue({ name: 't', scopes: ['transactions'] });
    expect(missing.json()).toMatchObject({ error: 'invalid_request', details: { field: 'push_source' } });
    const made = (await issue({ name: 't', scopes: ['transactions'], push_source: 'erp' })).json();
    expect(made.push_source).toBe('erp');
    expect(new Date(made.expires_at).getTime() - new Date(made.created_at).getTime()).toBe(90 * DAY_MS);
    const year = (
      await issue({ name: 't2', scopes: ['transactions'], push_source: 'erp', lifetime_days: 365 })
    ).json();
    expect(new Date(year.expires_at).getTime() - new Date(year.created_at).getTime()).toBe(365 * DAY_MS);
    expect(
      (await issue({ name: 't3', scopes: ['transactions'], push_source: 'erp', lifetime_days: 60 }))
        .statusCode,
    ).toBe(422);
    expect((await issue({ name: 'p', scopes: ['payments'], push_source: 'erp' })).statusCode).toBe(422);
    const plain = (await issue({ name: 'p', scopes: ['payments'] })).json();
    expect(plain.expires_at).toBeNull();
    const sources = await h.db
      .selectFrom('push_sources')
      .select('name')
      .where('space_id', '=', spaceId)
      .execute();
    expect(sources).toEqual([{ name: 'erp' }]);
  });

  it('leaves the old key working when a replacement is issued', async () => {
    const { owner, spaceId, key } = await h.world({ scopes: ['transactions'], push_source: 'erp' });
    await h.issueKey(owner, spaceId, { scopes: ['transactions'], push_source: 'erp' });
    expect((await h.inject({ method: 'GET', url: '/integration/ping', key: key.key })).statusCode).toBe(200);
  });

  it.each([
    ['http://hooks.example.com/x', 'https'],
    ['https://127.0.0.1/x', 'loopback'],
    ['https://10.1.2.3/x', 'private'],
    ['https://169.254.169.254/latest', 'metadata'],
    ['https://internal.example.com/x', 'private'],
    ['https://mixed.example.com/x', 'private'],
    ['https://nowhere.example.com/x', 'resolve'],
    ['not a url', 'URL'],
  ])('refuses the webhook address %s with 422 webhook_address_not_public', async (webhook_url) => {
    const owner = await h.signup();
    const spaceId = await h.createSpace(owner);
    const res = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/keys`,
      session: owner.token,
      payload: { name: 'k', scopes: ['payments'], webhook_url },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      error: 'webhook_address_not_public',
      details: { field: 'webhook_url' },
    });
  });

  it('admits loopback http webhook addresses only with the development switch', async () => {
    const dev = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
    try {
      const { key } = await dev.world({ webhook_url: 'http://127.0.0.1:9999/hook' });
      expect(key.key).toMatch(/^oit_/);
    } finally {
      await dev.close();
    }
  });

  it('reminds the issuer once, a week before a key ends', async () => {
    const { owner, spaceId, key } = await h.world({
      scopes: ['transactions'],
      push_source: 'erp',
      lifetime_days: 30,
    });
    const notifications = async () =>
      (
        await h.inject({
          method: 'GET',
          url: `/app/api/spaces/${spaceId}/notifications`,
          session: owner.token,
        })
      ).json().items;
    await remindExpiringKeys({ db: h.db, clock });
    expect(await notifications()).toEqual([]);
    clock.advance(23 * DAY_MS + 1000);
    try {
      await remindExpiringKeys({ db: h.db, clock });
      await remindExpiringKeys({ db: h.db, clock });
      const items = await notifications();
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({
        kind: 'key_expiring',
        subject_id: key.id,
        payload: { key_id: key.id },
      });
    } finally {
      clock.advance(-(23 * DAY_MS + 1000));
    }
  });
});
