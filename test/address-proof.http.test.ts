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
