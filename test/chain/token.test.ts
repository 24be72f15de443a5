import { readFileSync } from 'node:fs';
import {
  type Abi,
  type Address,
  getAbiItem,
  type Hex,
  hashDomain,
  keccak256,
  parseSignature,
  toFunctionSignature,
  toHex,
} from 'viem';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileContracts } from '../../scripts/build-contracts.ts';
import type { Chain, LocalChain } from '../../src/platform/chain/chain.ts';
import {
  EIP3009_TOKEN_ABI,
  loadTestUsdcArtifact,
  TEST_USDC_ABI,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
} from '../../src/platform/chain/token.ts';
import { startTestChain } from './chain-setup.ts';

const HALF_CURVE_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;
const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

describe('the TestUSDC build', () => {
  it('rebuilds byte-identical to the checked-in artifact', () => {
    const built = compileContracts();
    expect([...built.keys()]).toEqual([
      'contracts/build/TestUSDC.json',
      'contracts/build/LocalMulticall.json',
    ]);
    for (const [path, text] of built)
      expect(text).toBe(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8'));
  });

  it('has every function and event Tollbook calls in its compiled ABI', () => {
    const compiled = loadTestUsdcArtifact().abi;
    const signatures = new Set(
      compiled
        .filter((item) => item.type === 'function' || item.type === 'event')
        .map((item) => toFunctionSignature(item as never)),
    );
    for (const item of [...EIP3009_TOKEN_ABI, ...TEST_USDC_ABI] as Abi) {
      expect(signatures).toContain(toFunctionSignature(item as never));
    }
  });
});

describe('TestUSDC on anvil', () => {
  let chain: Chain;
  let local: LocalChain;
  let token: Address;
  let payer: PrivateKeyAccount;

  beforeAll(async () => {
    chain = await startTestChain();
    local = chain.local!;
    token = local.network.token.address;
    payer = privateKeyToAccount(generatePrivateKey());
    await local.fund(payer.address, 50_000_000n, 0n);
  });
  afterAll(() => chain?.close());

  const balanceOf = (address: Address) =>
    local.publicClient.readContract({
      address: token,
      abi: EIP3009_TOKEN_ABI,
      functionName: 'balanceOf',
      args: [address],
    });

  type Authorization = {
    from: Address;
    to: Address;
    value: bigint;
    validAfter: bigint;
    validBefore: bigint;
    nonce: Hex;
  };

  function authorization(overrides: Partial<Authorization> = {}): Authorization {
    const now = BigInt(Math.floor(Date.now() / 1000));
    return {
      from: payer.address,
      to: privateKeyToAccount(generatePrivateKey()).address,
      value: 1_250_000n,
      validAfter: 0n,
      validBefore: now + 3600n,
      nonce: keccak256(toHex(`${Math.random()}-${Date.now()}`)),
      ...overrides,
    };
  }

  function sign(message: Authorization, signer: PrivateKeyAccount = payer): Promise<Hex> {
    const { name, version } = local.network.token;
    return signer.signTypedData({
      domain: { name, version, chainId: 31337, verifyingContract: token },
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: 'TransferWithAuthorization',
      message,
    });
  }

  function argsOf(message: Authorization, signature: Hex) {
    const { r, s, yParity } = parseSignature(signature);
    const v = 27 + yParity;
    return [
      message.from,
      message.to,
      message.value,
      message.validAfter,
      message.validBefore,
      message.nonce,
      v,
      r,
      s,
    ] as const;
  }

  /** Sends transferWithAuthorization from the gas wallet and waits for the receipt. */
  async function submit(args: ReturnType<typeof argsOf>) {
    const hash = await local.walletClient.writeContract({
      address: token,
      abi: EIP3009_TOKEN_ABI,
      functionName: 'transferWithAuthorization',
      args,
    });
    return local.publicClient.waitForTransactionReceipt({ hash });
  }

  const simulate = (args: readonly unknown[]) =>
    local.publicClient.simulateContract({
      account: local.walletClient.account,
      address: token,
      abi: EIP3009_TOKEN_ABI,
      functionName: 'transferWithAuthorization',
      args: args as never,
    });

  it('reports its name, version and decimals from the contract (EIP-5267 and the plain getters agree)', async () => {
    expect(local.network.token).toMatchObject({
      name: 'USD Coin (Tollbook test)',
      version: '2',
      decimals: 6,
      symbol: 'USDC',
    });
    const read = (functionName: 'name' | 'version' | 'decimals') =>
      local.publicClient.readContract({ address: token, abi: EIP3009_TOKEN_ABI, functionName });
    expect([await read('name'), await read('version'), await read('decimals')]).toEqual([
      'USD Coin (Tollbook test)',
      '2',
      6,
    ]);
    const separator = await local.publicClient.readContract({
      address: token,
      abi: TEST_USDC_ABI,
      functionName: 'DOMAIN_SEPARATOR',
    });
    expect(separator).toBe(
      hashDomain({
        domain: { name: 'USD Coin (Tollbook test)', version: '2', chainId: 31337n, verifyingContract: token },
        types: {
          EIP712Domain: [
            { name: 'name', type: 'string' },
            { name: 'version', type: 'string' },
            { name: 'chainId', type: 'uint256' },
            { name: 'verifyingContract', type: 'address' },
          ],
        },
      }),
    );
    expect(
      await local.publicClient.readContract({ address: token, abi: TEST_USDC_ABI, functionName: 'minter' }),
    ).toBe(chain.gasWallet);
  });

  it('moves the tokens on a signed transferWithAuthorization and marks the nonce used, with AuthorizationUsed', async () => {
    const message = authorization();
    const before = await balanceOf(payer.address);
    const receipt = await submit(argsOf(message, await sign(message)));
    expect(receipt.status).toBe('success');
    expect(await balanceOf(payer.address)).toBe(before - message.value);
    expect(await balanceOf(message.to)).toBe(message.value);
    const state = await local.publicClient.readContract({
      address: token,
      abi: EIP3009_TOKEN_ABI,
      functionName: 'authorizationState',
      args: [payer.address, message.nonce],
    });
    expect(state).toBe(true);
    const used = getAbiItem({ abi: EIP3009_TOKEN_ABI, name: 'AuthorizationUsed' });
    const logs = await local.publicClient.getLogs({
      address: token,
      event: used,
      blockHash: receipt.blockHash,
    });
    expect(logs.map((log) => log.args)).toEqual([{ authorizer: payer.address, nonce: message.nonce }]);
  });

  it('accepts the 65-byte signature form as well', async () => {
    const message = authorization({ value: 1n });
    const signature = await sign(message);
    const { from, to, value, validAfter, validBefore, nonce } = message;
    const hash = await local.walletClient.writeContract({
      address: token,
      abi: EIP3009_TOKEN_ABI,
      functionName: 'transferWithAuthorization',
      args: [from, to, value, validAfter, validBefore, nonce, signature],
    });
    expect((await local.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
    expect(await balanceOf(to)).toBe(1n);
  });

  it('reverts a replayed authorization and moves nothing', async () => {
    const message = authorization();
    const args = argsOf(message, await sign(message));
    await submit(args);
    const before = await balanceOf(payer.address);
    await expect(simulate(args)).rejects.toThrow(/authorization is used or canceled/);
    expect(await balanceOf(payer.address)).toBe(before);
  });

  it('reverts an expired authorization (validBefore in the past) and one not yet valid', async () => {
    const now = BigInt(Math.floor(Date.now() / 1000));
    const expired = authorization({ validBefore: now - 60n });
    await expect(simulate(argsOf(expired, await sign(expired)))).rejects.toThrow(/authorization is expired/);
    const early = authorization({ validAfter: now + 3600n, validBefore: now + 7200n });
    await expect(simulate(argsOf(early, await sign(early)))).rejects.toThrow(/not yet valid/);
  });

  it('reverts a signature by anyone but the payer, and a tampered amount', async () => {
    const message = authorization();
    const stranger = privateKeyToAccount(generatePrivateKey());
    await expect(simulate(argsOf(message, await sign(message, stranger)))).rejects.toThrow(
      /invalid signature/,
    );
    const signature = await sign(message);
    await expect(simulate(argsOf({ ...message, value: message.value + 1n }, signature))).rejects.toThrow(
      /invalid signature/,
    );
  });

  it('refuses the malleable twin of a valid signature (s above half the curve order)', async () => {
    const message = authorization();
    const [from, to, value, validAfter, validBefore, nonce, v, r, s] = argsOf(message, await sign(message));
    expect(BigInt(s) <= HALF_CURVE_ORDER).toBe(true);
    const twinS = toHex(CURVE_ORDER - BigInt(s), { size: 32 });
    const twinV = v === 27 ? 28 : 27;
    await expect(
      simulate([from, to, value, validAfter, validBefore, nonce, twinV, r, twinS]),
    ).rejects.toThrow(/invalid signature 's' value/);
  });

  it('lets only the faucet (the deployer) mint', async () => {
    const outsider = privateKeyToAccount(generatePrivateKey());
    await expect(
      local.publicClient.simulateContract({
        account: outsider,
        address: token,
        abi: TEST_USDC_ABI,
        functionName: 'mint',
        args: [outsider.address, 1n],
      }),
    ).rejects.toThrow(/caller is not the minter/);
  });
});
