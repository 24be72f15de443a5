import type { FastifyInstance } from 'fastify';
import { type Address, parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Chain } from '../../src/platform/chain/chain.ts';
import { EIP3009_TOKEN_ABI } from '../../src/platform/chain/token.ts';
import { buildChainApp, startTestChain } from './chain-setup.ts';

describe('POST /dev/faucet', () => {
  let chain: Chain;
  let app: FastifyInstance;

  beforeAll(async () => {
    chain = await startTestChain();
    app = await buildChainApp(chain);
  });
  afterAll(async () => {
    await app?.close();
    await chain?.close();
  });

  const fresh = () => privateKeyToAccount(generatePrivateKey()).address;
  const faucet = (payload: unknown) =>
    app.inject({ method: 'POST', url: '/dev/faucet', payload: payload as object });
  const usdcOf = (address: Address) =>
    chain.local!.publicClient.readContract({
      address: chain.local!.network.token.address,
      abi: EIP3009_TOKEN_ABI,
      functionName: 'balanceOf',
      args: [address],
    });

  describe('success', () => {
    it('mints exactly the amount in base units and sends 1 ETH for gas, answering network, asset, tx hash and RPC URL', async () => {
      const address = fresh();
      const res = await faucet({ address, usdc: '100.123456' });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toEqual({
        network: 'eip155:31337',
        asset: chain.local!.network.token.address,
        tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        gas_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        rpc_url: chain.local!.rpcUrl,
      });
      expect(await usdcOf(address)).toBe(100_123_456n);
      expect(await chain.local!.publicClient.getBalance({ address })).toBe(parseEther('1'));
      const receipt = await chain.local!.publicClient.getTransactionReceipt({ hash: body.tx_hash });
      expect(receipt.status).toBe('success');
      expect(receipt.to?.toLowerCase()).toBe(chain.local!.network.token.address.toLowerCase());
    });

    it('adds to what the address holds; takes a JSON number and a lower-case address', async () => {
      const address = fresh();
      expect((await faucet({ address: address.toLowerCase(), usdc: 2.5 })).statusCode).toBe(200);
      expect((await faucet({ address, usdc: '1000000' })).statusCode).toBe(200);
      expect(await usdcOf(address)).toBe(1_000_002_500_000n);
    });

    it('serves concurrent calls without reusing a gas-wallet nonce', async () => {
      const addresses = Array.from({ length: 6 }, fresh);
      const answers = await Promise.all(addresses.map((address) => faucet({ address, usdc: '3' })));
      expect(answers.map((answer) => answer.statusCode)).toEqual(addresses.map(() => 200));
      for (const address of addresses) expect(await usdcOf(address)).toBe(3_000_000n);
    });
  });

  describe('validation', () => {
    const cases: [string, unknown, string, string][] = [
      ['a malformed address', { address: '0x1234', usdc: '1' }, 'address', 'string_pattern_mismatch'],
      [
        'a mixed-case address with a bad checksum',
        { address: '0x70997970C51812dc3A010C7d01b50e0d17dc79c8', usdc: '1' },
        'address',
        'value_error',
      ],
      ['zero', { address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', usdc: '0' }, 'usdc', 'greater_than'],
      [
        'a negative amount',
        { address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', usdc: '-5' },
        'usdc',
        'greater_than',
      ],
      [
        'seven decimals',
        { address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', usdc: '0.0000001' },
        'usdc',
        'decimal_max_places',
      ],
      [
        'more than 1,000,000',
        { address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', usdc: '1000000.000001' },
        'usdc',
        'less_than_equal',
      ],
      [
        'not a decimal',
        { address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', usdc: '1e3' },
        'usdc',
        'decimal_parsing',
      ],
      ['a missing amount', { address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' }, 'usdc', 'missing'],
    ];
    it.each(cases)('refuses %s with 422 in the validation shape', async (_name, payload, field, type) => {
      const res = await faucet(payload);
      expect(res.statusCode).toBe(422);
      expect(res.json().detail).toContainEqual(expect.objectContaining({ loc: ['body', field], type }));
    });

    it('mints nothing when it refuses', async () => {
      const address = fresh();
      expect((await faucet({ address, usdc: '0.0000001' })).statusCode).toBe(422);
      expect(await usdcOf(address)).toBe(0n);
      expect(await chain.local!.publicClient.getBalance({ address })).toBe(0n);
    });
  });

  describe('production', () => {
    it('answers 404: the route does not exist when NODE_ENV=production', async () => {
      const production = await buildChainApp(chain, {
        NODE_ENV: 'production',
        MASTER_KEY: 'ef'.repeat(32),
        CHAIN: '0',
      });
      try {
        const res = await production.inject({
          method: 'POST',
          url: '/dev/faucet',
          payload: { address: fresh(), usdc: '1' },
        });
        expect(res.statusCode).toBe(404);
        expect(res.json().error).toBe('not_found');
      } finally {
        await production.close();
      }
    });
  });
});
