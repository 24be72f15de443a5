import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import { BACKOFF_CAP_SECONDS, backoffSeconds, THROTTLES } from '../src/platform/http/attempt-throttle.ts';
import { createHarness, type Harness } from './harness.ts';

// Login, signup and reset requests are throttled per account and per client address with an
// exponential back-off and a cap; the owner gets in again once the back-off has passed.

const clock = new ManualClock(new Date());
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ clock });
});
afterAll(() => h.close());

/** A documentation address (2001:db8::/32) of its own per test, so runs never share counts. */
const freshAddress = () => `2001:db8::${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;

const login = (email: string, password: string, remoteAddress = freshAddress()) =>
  h.inject({ method: 'POST', url: '/app/api/login', payload: { email, password }, remoteAddress });

describe('the back-off schedule', () => {
  it('is free within the allowance, then doubles up to the cap', () => {
    const free = THROTTLES.loginAccount.free;
    expect([1, 2, 3, 4].map((n) => backoffSeconds(n, free))).toEqual([0, 0, 0, 0]);
    expect([5, 6, 7, 8, 13, 14, 15, 1000].map((n) => backoffSeconds(n, free))).toEqual([
      1,
      2,
      4,
      8,
      256,
      BACKOFF_CAP_SECONDS,
      BACKOFF_CAP_SECONDS,
      BACKOFF_CAP_SECONDS,
    ]);
  });
});

describe('POST /app/api/login per account', () => {
  it('answers 30 wrong passwords in a row with 401 five times, then 429 with Retry-After', async () => {
    const owner = await h.signup('Owner');
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 30; attempt++) {
      const res = await login(owner.email, 'wrong-password');
      statuses.push(res.statusCode);
      if (res.statusCode === 429) {
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(res.json()).toMatchObject({ error: 'rate_limited' });
      }
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5).every((status) => status === 429)).toBe(true);
    // Even the right password waits out the back-off (otherwise guessing would go on for free)...
    const early = await login(owner.email, owner.password);
    expect(early.statusCode).toBe(429);
    // ...and once it has passed, the owner is let in and the count starts over.
    clock.advance(Number(early.headers['retry-after']) * 1000);
    expect((await login(owner.email, owner.password)).statusCode).toBe(200);
    expect((await login(owner.email, 'wrong-password')).statusCode).toBe(401);
  });

  it('doubles the wait with each failure past the allowance, and never past the cap', async () => {
    const owner = await h.signup('Owner');
    const waits: number[] = [];
    for (let attempt = 0; attempt < 16; attempt++) {
      const res = await login(owner.email, 'wrong-password');
      expect(res.statusCode).toBe(401);
      const blocked = await login(owner.email, 'wrong-password');
      if (blocked.statusCode === 429) {
        const wait = Number(blocked.headers['retry-after']);
        waits.push(wait);
        clock.advance(wait * 1000);
      }
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300, 300, 300]);
    expect((await login(owner.email, owner.password)).statusCode).toBe(200);
  });

  it('counts concurrent wrong passwords one by one: exactly five are checked, the rest wait', async () => {
    const owner = await h.signup('Owner');
    const answers = await Promise.all(Array.from({ length: 30 }, () => login(owner.email, 'wrong-password')));
    const statuses = answers.map((res) => res.statusCode).sort();
    expect(statuses.filter((status) => status === 401)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(25);
  });

  it('throttles an unknown address the same way, so the answers tell nobody who has an account', async () => {
    const email = `nobody-${randomBytes(4).toString('hex')}@example.com`;
    const statuses = [];
    for (let attempt = 0; attempt < 7; attempt++) statuses.push((await login(email, 'x')).statusCode);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });
});

describe('POST /app/api/login per client address', () => {
  it('slows one address trying many accounts, leaves other addresses alone, and forgives its successes', async () => {
    const attacker = freshAddress();
    const owner = await h.signup('Owner');
    // Successes from the address take their attempt back: an office behind one address is fine.
    for (let index = 0; index < 40; index++)
      expect((await login(owner.email, owner.password, attacker)).statusCode).toBe(200);
    const statuses: number[] = [];
    for (let index = 0; index < 32; index++) {
      statuses.push(
        (await login(`victim-${index}-${randomBytes(3).toString('hex')}@example.com`, 'guess', attacker))
          .statusCode,
      );
    }
    expect(statuses.slice(0, THROTTLES.loginAddress.free).every((status) => status === 401)).toBe(true);
    expect(statuses.slice(THROTTLES.loginAddress.free)).toEqual([429, 429]);
    expect((await login(owner.email, owner.password, attacker)).statusCode).toBe(429);
    expect((await login(owner.email, owner.password, freshAddress())).statusCode).toBe(200);
  });

  it('does not count loopback (a proxy on this host), where every client would share one count', async () => {
    for (let index = 0; index < 40; index++) {
      const email = `loop-${index}-${randomBytes(3).toString('hex')}@example.com`;
      expect((await login(email, 'guess', '127.0.0.1')).statusCode).toBe(401);
    }
  });
});

describe('POST /app/api/signup per client address', () => {
  it('opens ten accounts from one address in an hour, then asks it to wait', async () => {
    const address = freshAddress();
    const signup = () =>
      h.inject({
        method: 'POST',
        url: '/app/api/signup',
        remoteAddress: address,
        payload: {
          email: `s-${randomBytes(5).toString('hex')}@example.com`,
          password: 'long-enough-password',
          name: 'S',
        },
      });
    const statuses: number[] = [];
    for (let index = 0; index < 12; index++) statuses.push((await signup()).statusCode);
    expect(statuses).toEqual([...Array(10).fill(201), 429, 429]);
    clock.advance(BACKOFF_CAP_SECONDS * 1000);
    expect((await signup()).statusCode).toBe(201);
  });
});
