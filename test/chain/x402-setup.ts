import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { type Address, createWalletClient, type Hex, http, toHex } from 'viem';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { type WatchDeps, watchOnce } from '../../src/features/chain-watch/index.ts';
import type { Chain } from '../../src/platform/chain/chain.ts';
import { EIP3009_TOKEN_ABI, TRANSFER_WITH_AUTHORIZATION_TYPES } from '../../src/platform/chain/token.ts';
import { createHarness, type Harness } from '../harness.ts';
import { buildChainApp, startTestChain } from './chain-setup.ts';

// The x402 tests' world: anvil with the test token, the real app listening on loopback (x402
// clients speak HTTP, not inject), and the shared harness for owners, spaces and keys.

export type X402World = Awaited<ReturnType<typeof startX402World>>;

export type Requirement = {
  scheme: string;
  network: string;
  asset: string;
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: Record<string, unknown>;
};

export type Authorization = {
  from: Address;
  to: Address;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
};

/** A JSON answer in a test, read field by field by the assertions. */
// biome-ignore lint/suspicious/noExplicitAny: assertions check the fields; a type would only restate them.
export type Body = Record<string, any>;

/** The PAYMENT-SIGNATURE header for a payload. */
export const encodePayment = (payload: unknown) => Buffer.from(JSON.stringify(payload)).toString('base64');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The world on a chain of its own, or on `given` (say, one reached through a fault proxy). */
export async function startX402World(env: Record<string, string> = {}, given?: Chain) {
  const chain: Chain = given ?? (await startTestChain());
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const settings = { PUBLIC_URL: base, RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_PRIVATE: '1', ...env };
  const app: FastifyInstance = await buildChainApp(chain, settings);
  await app.listen({ port, host: '127.0.0.1' });
  const h: Harness = await createHarness({ env: settings });
  const local = chain.local!;
  const token = local.network.token;

  const usdcOf = (address: Address) =>
    local.publicClient.readContract({
      address: token.address,
      abi: EIP3009_TOKEN_ABI,
      functionName: 'balanceOf',
      args: [address],
    });

  /** A space with a proven USDC account on the local chain, and a key (with a webhook, if given). */
  async function seller(keyBody: Record<string, unknown> = {}) {
    const signer = privateKeyToAccount(generatePrivateKey());
    const world = await h.world(keyBody);
    const account = await h.makeAccount(world.spaceId, {
      kind: 'crypto',
      name: 'Wallet',
      currency: 'USDC',
      network: 'local',
      address: signer.address,
    });
    const url = `/app/api/spaces/${world.spaceId}/accounts/${account.id}/address-proof`;
    const challenge = await h.inject({ method: 'POST', url, session: world.owner.token, payload: {} });
    const signature = await signer.signMessage({ message: challenge.json().message });
    const proven = await h.inject({
      method: 'POST',
      url,
      session: world.owner.token,
      payload: { signature },
    });
    if (proven.statusCode !== 200) throw new Error(`Proof failed: ${proven.body}`);
    return { ...world, account, address: signer.address, signer };
  }

  /** A payer holding `usdc` of the test token (and gas it never needs: the gas wallet pays). */
  async function payer(usdc = 100n * 1_000_000n): Promise<PrivateKeyAccount & { key: Hex }> {
    const key = generatePrivateKey();
    const account = privateKeyToAccount(key);
    if (usdc > 0n) await local.fund(account.address, usdc, 0n);
    return Object.assign(account, { key });
  }

  /** The official x402 client for `account`, its spend controls opened for the local token. */
  function payingFetch(account: PrivateKeyAccount) {
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: toClientEvmSigner(account, local.publicClient as never) });
    client.setSpendControls({ allowedAssets: [{ network: local.network.caip2, asset: token.address }] });
    return wrapFetchWithPayment(fetch, client);
  }

  /**
   * A payment payload signed by `account` for `requirement`, with any authorization field or
   * EIP-712 domain field overridden: how the refusal tests make authorizations a client would not.
   */
  async function authorize(
    account: PrivateKeyAccount,
    requirement: Requirement,
    overrides: Partial<Authorization> & { name?: string; version?: string } = {},
    resource = { url: `${base}/resource`, description: '', mimeType: 'application/json' },
  ) {
    const now = Math.floor(Date.now() / 1000);
    const authorization: Authorization = {
      from: account.address,
      to: requirement.payTo as Address,
      value: requirement.amount,
      validAfter: String(now - 600),
      validBefore: String(now + requirement.maxTimeoutSeconds),
      nonce: toHex(randomBytes(32)),
      ...overrides,
    };
    const signature = await account.signTypedData({
      domain: {
        name: overrides.name ?? String(requirement.extra.name),
        version: overrides.version ?? String(requirement.extra.version),
        chainId: local.network.chainId,
        verifyingContract: requirement.asset as Address,
      },
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: {
        from: authorization.from,
        to: authorization.to,
        value: BigInt(authorization.value),
        validAfter: BigInt(authorization.validAfter),
        validBefore: BigInt(authorization.validBefore),
        nonce: authorization.nonce,
      },
    });
    return { x402Version: 2, resource, accepted: requirement, payload: { authorization, signature } };
  }

  /** The gas wallet's transaction count over every lane: unchanged means nothing was sent on chain. */
  const gasNonce = async () => {
    const counts = await Promise.all(
      chain.gasWallets.map((address) => local.publicClient.getTransactionCount({ address })),
    );
    return counts.reduce((sum, count) => sum + count, 0);
  };

  async function api(method: string, path: string, key: string, body?: unknown) {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Body };
  }

  async function mint(key: string, amount: string, extra: Record<string, unknown> = {}) {
    const res = await api('POST', '/integration/payment-requests', key, {
      amount,
      memo: 'Paid call',
      ...extra,
    });
    if (res.status !== 201) throw new Error(`Mint failed: ${JSON.stringify(res.body)}`);
    return res.body as {
      id: string;
      token: string;
      url: string;
      amount: string;
      amount_due: string;
      status: string;
    };
  }

  return {
    chain,
    local,
    token,
    app,
    h,
    base,
    usdcOf,
    seller,
    payer,
    payingFetch,
    api,
    mint,
    authorize,
    gasNonce,
    close: async () => {
      await app.close();
      await h.close();
      await chain.close();
    },
  };
}

/** A plain ERC-20 transfer of the test token from `payer`, who pays its own gas; waits for success. */
export async function sendTokenTransfer(
  w: X402World,
  payer: PrivateKeyAccount,
  to: Address,
  baseUnits: bigint,
) {
  const wallet = createWalletClient({
    chain: w.local.walletClient.chain,
    transport: http(w.local.rpcUrl),
    account: payer,
  });
  const hash = await wallet.writeContract({
    address: w.token.address,
    abi: EIP3009_TOKEN_ABI,
    functionName: 'transfer',
    args: [to, baseUnits],
  });
  const receipt = await w.local.publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`The transfer ${hash} reverted.`);
  return hash;
}

/** A fresh payer holding `usdc` base units of the test token and gas money. */
export async function fundedPayer(w: X402World, usdc: bigint) {
  const payer = await w.payer(0n);
  await w.local.fund(payer.address, usdc);
  return payer;
}

/** The advisory lock the files that run the account watch take turns on (any fixed number). */
const CHAIN_WATCH_LOCK = 7_302_411;

/**
 * The account watch keeps one cursor per network in the database, so two test files watching two
 * anvil chains on one PostgreSQL server would move each other's cursor. Files that run the watch
 * take turns: this holds a session advisory lock until the returned function ends the session.
 * On PGlite every test process has a database of its own, and nothing needs to wait.
 */
export async function takeTurnWatchingChains(): Promise<() => Promise<void>> {
  const url = process.env.DATABASE_URL;
  if (!url) return async () => {};
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('SELECT pg_advisory_lock($1)', [CHAIN_WATCH_LOCK]);
  return async () => {
    await client.end();
  };
}

/**
 * An x402 world whose account watch these tests drive by hand (no confirmations on the local
 * chain), started in its turn and caught up once; `close` stops it and ends the turn.
 */
export async function startWatchedWorld() {
  const endTurn = await takeTurnWatchingChains();
  const w = await startX402World();
  const deps: WatchDeps = { db: w.h.db, clock: w.h.clock, chain: w.chain, confirmations: { local: 0 } };
  await watchOnce(deps);
  return {
    w,
    deps,
    close: async () => {
      await w.close();
      await endTurn();
    },
  };
}
