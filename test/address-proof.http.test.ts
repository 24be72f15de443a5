import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

async function walletWorld() {
  const signer = privateKeyToAccount(generatePrivateKey());
  const world = await h.world({ scopes: ['accounts'] });
  const account = await h.makeAccount(world.spaceId, {
    kind: 'crypto',
    name: 'W',
    currency: 'USDC',
    network: 'local',
    address: signer.address,
  });
  const prove = (body: Record<string, unknown>, token = world.owner.token) =>
    h.inject({
      method: 'POST',
      url: `/app/api/spaces/${world.spaceId}/accounts/${account.id}/address-proof`,
      session: token,
      payload: body,
    });
  const proven = async () =>
    (
      await h.db
        .selectFrom('accounts')
        .select(['address_proven', 'address_proven_at'])
        .where('id', '=', account.id)
        .executeTakeFirstOrThrow()
    ).address_proven;
  return { signer, world, account, prove, proven };
}

describe('POST /app/api/spaces/{id}/accounts/{account_id}/address-proof', () => {
  it('proves control with a personal_sign of a one-time challenge, checked with viem', async () => {
    const { signer, prove, proven } = await walletWorld();
    const challenge = await prove({});
    expect(challenge.statusCode).toBe(200);
    expect(challenge.json().message).toContain(signer.address);
    expect(await proven()).toBeNull();
    const signature = await signer.signMessage({ message: challenge.json().message });
    const done = await prove({ signature });
    expect(done.json()).toMatchObject({ proven: true, address: signer.address });
    expect(await proven()).toBe(signer.address.toLowerCase());
    // The challenge is used up: the same signature cannot prove anything again.
    expect((await prove({ signature })).statusCode).toBe(422);
  });

  it('refuses a signature by another key, and a signature of another message', async () => {
    const { prove, proven, signer } = await walletWorld();
    const challenge = (await prove({})).json().message as string;
    const stranger = privateKeyToAccount(generatePrivateKey());
    const wrongKey = await prove({ signature: await stranger.signMessage({ message: challenge }) });
    expect(wrongKey.statusCode).toBe(422);
    expect(wrongKey.json()).toMatchObject({ error: 'invalid_request', details: { field: 'signature' } });
    const next = (await prove({})).json().message as string;
    expect((await prove({ signature: await signer.signMessage({ message: `${next} ` }) })).statusCode).toBe(
      422,
    );
    expect(await proven()).toBeNull();
  });

  it('refuses malformed signatures, accounts without an address, members, and other spaces', async () => {
    const { prove, world, account } = await walletWorld();
    const bad = await prove({ signature: '0x1234' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0]).toMatchObject({
      loc: ['body', 'signature'],
      type: 'string_pattern_mismatch',
    });
    const bank = await h.makeAccount(world.spaceId, { kind: 'bank', name: 'B', currency: 'USD' });
    const noAddress = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${world.spaceId}/accounts/${bank.id}/address-proof`,
      session: world.owner.token,
      payload: {},
    });
    expect(noAddress.json()).toMatchObject({ error: 'invalid_request', details: { field: 'account_id' } });
    const member = await h.signup();
    await h.addMember(world.owner, world.spaceId, member, 'member');
    expect((await prove({}, member.token)).statusCode).toBe(403);
    const stranger = await h.world();
    const foreign = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${stranger.spaceId}/accounts/${account.id}/address-proof`,
      session: stranger.owner.token,
      payload: {},
    });
    expect(foreign.statusCode).toBe(404);
  });
});

describe('the machine quote on the payment page', () => {
  it('offers no on-chain entry, even for a proven address, on a server with no chain to settle on', async () => {
    // The harness runs no chain; the chain tests (test/chain/x402-*.test.ts) cover the quote itself.
    const { signer, prove, world, account } = await walletWorld();
    const payKey = await h.issueKey(world.owner, world.spaceId, { scopes: ['payments'] });
    const minted = (
      await h.inject({
        method: 'POST',
        url: '/integration/payment-requests',
        key: payKey.key,
        payload: { account_id: account.id, amount: '2.5', currency: 'USD', memo: 'one call' },
      })
    ).json();
    const challenge = (await prove({})).json().message as string;
    await prove({ signature: await signer.signMessage({ message: challenge }) });
    const after = await h.inject({
      method: 'GET',
      url: `/pay/${minted.token}`,
      headers: { accept: 'application/json' },
    });
    expect(after.statusCode).toBe(402);
    expect(after.headers['cache-control']).toBe('no-store');
    const body = after.json();
    expect(body).toMatchObject({
      x402Version: 2,
      resource: { url: minted.url, description: 'one call' },
      accepts: [],
    });
    expect(
      JSON.parse(Buffer.from(String(after.headers['payment-required']), 'base64').toString('utf8')),
    ).toEqual(body);
  });

  it('answers a paid request with its record (200), never a quote', async () => {
    const { world, account } = await walletWorld();
    const payKey = await h.issueKey(world.owner, world.spaceId, { scopes: ['payments'] });
    const minted = (
      await h.inject({
        method: 'POST',
        url: '/integration/payment-requests',
        key: payKey.key,
        payload: { account_id: account.id, amount: 2 },
      })
    ).json();
    await h.inject({
      method: 'POST',
      url: `/pay/${minted.token}/card`,
      payload: { number: '4242424242424242', exp: '12/34', cvc: '123' },
    });
    const paid = await h.inject({
      method: 'GET',
      url: `/pay/${minted.token}`,
      headers: { accept: 'application/json' },
    });
    expect(paid.statusCode).toBe(200);
    expect(paid.json()).toMatchObject({ status: 'paid', amount_received: '2.00000000' });
  });
});
