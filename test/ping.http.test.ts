import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeAuthContract } from './auth-contract.ts';
import { createHarness, type Harness } from './harness.ts';

describeAuthContract({ method: 'GET', url: '/integration/ping', scope: 'any', okStatus: 200 });

describe('GET /integration/ping', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(() => h.close());

  it('names the space and the scopes of the calling key', async () => {
    const { key } = await h.world({ scopes: ['accounts', 'payments'] });
    const res = await h.inject({ method: 'GET', url: '/integration/ping', key: key.key });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ space_id: key.spaceId, scopes: ['accounts', 'payments'] });
  });

  it('accepts no other credential: a session token is not an integration key', async () => {
    const { owner } = await h.world();
    const res = await h.inject({ method: 'GET', url: '/integration/ping', session: owner.token });
    expect(res.statusCode).toBe(401);
  });

  it('answers 404 in the error shape for unknown routes, never an HTML page', async () => {
    const res = await h.inject({ method: 'GET', url: '/integration/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toBe('not_found');
  });
});
