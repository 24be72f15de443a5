import type { FastifyInstance } from 'fastify';
import { createWalletClient, type Hex, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChainRailDeps, followChainPayouts } from '../../src/features/payouts/index.ts';
import { type Chain, connectClients } from '../../src/platform/chain/chain.ts';
import { networkDefinition } from '../../src/platform/chain/networks.ts';
import { chainUnknownTotal } from '../../src/platform/chain/outcome.ts';
import {
  FAILING_FAULTS,
  FAULTS,
  type RpcFaultProxy,
  startRpcFaultProxy,
} from '../fixtures/rpc-fault-proxy.ts';
import { createHarness, type Harness } from '../harness.ts';
import { type Book, makeBook } from '../payouts-setup.ts';
import { holdLocalChainPayouts } from '../support/turns.ts';
import { buildChainApp, startTestChain } from './chain-setup.ts';

holdLocalChainPayouts();

// The chain rail's follower reads receipts through a proxy that fails on demand. A read that ends
// unknown neither executes nor undoes a payment: an executed payment stays executed through any
// fault, so money.out and payout.executed happen once; a payment waiting for its confirmations
// executes once after the node answers again. A round's totals are never read: the shared test
// database holds other files' payments too; each test reads its own payment's events.

let chain: Chain;
let app: FastifyInstance;
let h: Harness;
let b: Book;
let wallet: { id: string };
let proxy: RpcFaultProxy;
let faulty: ChainRailDeps;
const signer = privateKeyToAccount(generatePrivateKey());
const DESTINATION = '0x000000000000000000000000000000000000bEEF';
const CONFIRMATIONS = 2;

beforeAll(async () => {
  chain = await startTestChain();
  app = await buildChainApp(chain, { LOCAL_CONFIRMATIONS: String(CONFIRMATIONS) });
  h = await createHarness();
  b = await makeBook(h);
  wallet = await h.makeAccount(b.spaceId, {
    kind: 'crypto',
    name: 'Treasury',
    currency: 'USDC',
    network: 'local',
    address: signer.address,
    opening_balance: '100',
  });
  const url = `/app/api/spaces/${b.spaceId}/accounts/${wallet.id}/address-proof`;
  const challenge = await h.inject({ method: 'POST', url, session: b.owner.token, payload: {} });
  const signature = await signer.signMessage({ message: challenge.json().message });
  const proven = await h.inject({ method: 'POST', url, session: b.owner.token, payload: { signature } });
  expect(proven.statusCode).toBe(200);
  await chain.local!.fund(signer.address, 100n * 1_000_000n);
  proxy = await startRpcFaultProxy(chain.local!.rpcUrl);
  const proxied = connectClients(networkDefinition('local'), [proxy.url], [], 500);
  const through: Chain = { ...chain, clients: (name) => (name === 'local' ? proxied : chain.clients(name)) };
  faulty = { db: h.db, clock: h.clock, chain: through, confirmations: { local: CONFIRMATIONS } };
}, 120_000);
afterAll(async () => {
  await proxy?.close();
  await b?.ledgerSound();
  await app?.close();
  await h?.close();
  await chain?.close();
});

const call = (method: 'GET' | 'POST', path: string, payload?: Record<string, unknown>) =>
  app.inject({
    method,
    url: `/app/api/spaces/${b.spaceId}${path}`,
    headers: { authorization: `Bearer ${b.owner.token}` },
    ...(payload ? { payload } : {}),
  });

const mine = (blocks: number) =>
  chain.local!.publicClient.request({
    method: 'anvil_mine' as never,
    params: [`0x${blocks.toString(16)}`] as never,
  });

async function unknownCount(): Promise<number> {
  const metric = await chainUnknownTotal.get();
  return metric.values
    .filter((value) => value.labels.network === 'local')
    .reduce((sum, v) => sum + v.value, 0);
}

/** A chain payment whose transfer is sent, mined and reported (executing, below its confirmations). */
async function reportedPayment(amount: string) {
  const payment = (
    await call('POST', '/payments', {
      account_id: wallet.id,
      rail: 'chain',
      amount,
      payee: 'Vendor',
      destination: DESTINATION,
    })
  ).json();
  const tx = (await call('GET', `/payments/${payment.id}/transaction`)).json();
  const walletClient = createWalletClient({
    chain: chain.local!.walletClient.chain,
    transport: http(chain.local!.rpcUrl),
    account: signer,
  });
  const hash = await walletClient.sendTransaction({ to: tx.to as Hex, data: tx.data as Hex });
  await chain.local!.publicClient.waitForTransactionReceipt({ hash });
  const reported = await call('POST', `/payments/${payment.id}/chain-tx`, { tx_hash: hash });
  expect(reported.json().status).toBe('executing');
  return payment.id as string;
}

async function eventsOf(paymentId: string) {
  const executed = (await b.events('payout.executed')).filter((e) => e.payload.payment_id === paymentId);
  const ids = new Set(executed.map((e) => e.payload.transaction_id));
  const out = (await b.events('money.out')).filter((e) => ids.has(e.payload.transaction_id));
  return { executed: executed.length, out: out.length };
}

describe('the chain rail follower under node faults', () => {
  it('never undoes an executed payment on doubt: one money.out and one payout.executed through every fault', async () => {
    const paymentId = await reportedPayment('3');
    await mine(CONFIRMATIONS);
    await followChainPayouts(faulty);
    expect(await eventsOf(paymentId)).toEqual({ executed: 1, out: 1 });
    for (const { name, fault } of FAILING_FAULTS) {
      const before = await unknownCount();
      proxy.inject('eth_getTransactionReceipt', fault);
      try {
        // Rounds a block apart: what once reversed the payment and executed it again. The rounds'
        // totals are not read: the shared test database holds other files' payments too.
        await followChainPayouts(faulty);
        await mine(1);
        await followChainPayouts(faulty);
      } finally {
        proxy.clear();
      }
      expect(await unknownCount(), name).toBeGreaterThan(before);
      expect((await call('GET', `/payments/${paymentId}`)).json().status, name).toBe('executed');
    }
    await followChainPayouts(faulty);
    expect((await call('GET', `/payments/${paymentId}`)).json().status).toBe('executed');
    expect(await eventsOf(paymentId)).toEqual({ executed: 1, out: 1 });
    expect(await b.balance(wallet.id)).toBe('97.00000000');
  }, 240_000);

  it('does not execute a payment while its receipt cannot be read, then executes it once', async () => {
    const paymentId = await reportedPayment('2');
    await mine(CONFIRMATIONS);
    const balance = await b.balance(wallet.id);
    for (const { name, fault } of FAILING_FAULTS.slice(0, 4)) {
      proxy.inject('eth_getTransactionReceipt', fault);
      try {
        await followChainPayouts(faulty);
      } finally {
        proxy.clear();
      }
      expect((await call('GET', `/payments/${paymentId}`)).json().status, name).toBe('executing');
    }
    expect(await b.balance(wallet.id)).toBe(balance);
    expect(await eventsOf(paymentId)).toEqual({ executed: 0, out: 0 });
    await followChainPayouts(faulty);
    expect(await eventsOf(paymentId)).toEqual({ executed: 1, out: 1 });
    await followChainPayouts(faulty);
    expect(await eventsOf(paymentId)).toEqual({ executed: 1, out: 1 });
  }, 120_000);

  it('does not believe a lagging node that has not reached the payment’s confirmations', async () => {
    const paymentId = await reportedPayment('1');
    await mine(CONFIRMATIONS);
    proxy.inject('eth_blockNumber', FAULTS.lagging(CONFIRMATIONS + 5));
    try {
      await followChainPayouts(faulty);
    } finally {
      proxy.clear();
    }
    expect(await eventsOf(paymentId)).toEqual({ executed: 0, out: 0 });
    await followChainPayouts(faulty);
    expect(await eventsOf(paymentId)).toEqual({ executed: 1, out: 1 });
  }, 120_000);
});
