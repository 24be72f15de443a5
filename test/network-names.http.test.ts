import { getAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordGasBalances } from '../src/features/gas-wallets/index.ts';
import { insertNotification } from '../src/features/notifications/index.ts';
import { networkForPeople } from '../src/platform/chain/networks.ts';
import { createHarness, type Harness } from './harness.ts';

// Networks as people read them: by name ("Base", "Base Sepolia", the development chain's name),
// never by a CAIP-2 id or an account code, and a gas balance in the network's coin.

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

/** A lane address of this test's own, so another file's lanes on the shared table do not matter. */
const LANE = getAddress('0x00000000000000000000000000000000000ba5e1');

describe('network names for people', () => {
  it('names every account network and CAIP-2 id in the table, with its coin', () => {
    expect(networkForPeople('eip155:8453')).toEqual({ label: 'Base', nativeUnit: 'ETH' });
    expect(networkForPeople('base-sepolia')).toEqual({ label: 'Base Sepolia', nativeUnit: 'ETH' });
    expect(networkForPeople('eip155:31337')).toEqual({
      label: 'Tollbook development chain',
      nativeUnit: 'ETH',
    });
    expect(networkForPeople('polygon')).toEqual({ label: 'Polygon PoS', nativeUnit: 'POL' });
    // A network outside the table keeps its text, with no coin guessed for it.
    expect(networkForPeople('eip155:999999')).toEqual({ label: 'eip155:999999', nativeUnit: null });
  });

  it('Home’s low-gas warning names the network and gives the balance in ETH', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    await recordGasBalances({ db: h.db, clock: h.deps.clock, lowWei: 10n ** 16n }, [
      { network: 'base', caip2: 'eip155:8453', address: LANE, wei: 1_200_000_000_000_000n },
    ]);
    const home = await h.inject({
      method: 'GET',
      url: `/app/books/${spaceId}`,
      headers: { cookie: `tb_session=${owner.token}` },
    });
    expect(home.statusCode, home.body).toBe(200);
    const text = home.body.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');
    expect(text).toContain(`Gas wallet ${LANE.toLowerCase()} on Base is low: it holds 0.0012 ETH,`);
    expect(text).not.toContain('eip155:8453');
  });

  it('a low-gas notification names the network and gives the balance in its coin', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    await insertNotification(h.db, {
      spaceId,
      userId: owner.id,
      kind: 'gas_wallet_low',
      subjectId: null,
      payload: { network: 'eip155:84532', address: LANE.toLowerCase(), balance: '0.0012' },
      at: h.deps.clock.now(),
    });
    const page = await h.inject({
      method: 'GET',
      url: `/app/books/${spaceId}/notifications`,
      headers: { cookie: `tb_session=${owner.token}` },
    });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.body).toContain(
      `address: ${LANE.toLowerCase()} · balance: 0.0012 ETH · network: Base Sepolia`,
    );
  });

  it('the accounts list and its form name the network', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    await h.makeAccount(spaceId, {
      kind: 'crypto',
      name: 'Test wallet',
      currency: 'USDC',
      network: 'base-sepolia',
      address: '0x000000000000000000000000000000000000dEaD',
    });
    const list = await h.inject({
      method: 'GET',
      url: `/app/books/${spaceId}/accounts`,
      headers: { cookie: `tb_session=${owner.token}` },
    });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.body).toMatch(/<td[^>]*>Base Sepolia<\/td>/);
    expect(list.body).toContain('<option value="base-sepolia">Base Sepolia</option>');
  });
});
