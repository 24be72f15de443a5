import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REORG_WINDOW } from '../../src/features/chain-watch/domain.ts';
import { type WatchDeps, watchOnce } from '../../src/features/chain-watch/index.ts';
import { type Chain, connectClients } from '../../src/platform/chain/chain.ts';
import { networkDefinition } from '../../src/platform/chain/networks.ts';
import { chainUnknownTotal } from '../../src/platform/chain/outcome.ts';
import {
  FAILING_FAULTS,
  FAULTS,
  type RpcFault,
  type RpcFaultProxy,
  startRpcFaultProxy,
} from '../fixtures/rpc-fault-proxy.ts';
import { fundedPayer, sendTokenTransfer, startWatchedWorld, type X402World } from './x402-setup.ts';

// The account watch, the reorganisation check and the x402 settlement follower read the chain
// through a proxy that fails on demand. Whatever the fault, an unknown read books nothing,
// reverses nothing, writes no event and moves tollbook_chain_unknown_total; once the node
// answers again, what was due happens exactly once.

let w: X402World;
let direct: WatchDeps;
let faulty: WatchDeps;
let proxy: RpcFaultProxy;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ w, deps: direct, close } = await startWatchedWorld());
  proxy = await startRpcFaultProxy(w.local.rpcUrl);
  // The server's reads go through the proxy, with a short timeout so a held request ends soon.
  const proxied = connectClients(networkDefinition('local'), [proxy.url], [], 500);
  const chain: Chain = {
    ...w.chain,
    clients: (name) => (name === 'local' ? proxied : w.chain.clients(name)),
  };
  faulty = { ...direct, chain };
}, 600_000);
afterAll(async () => {
  await proxy?.close();
  await close?.();
});

async function unknownCount(): Promise<number> {
  const metric = await chainUnknownTotal.get();
  return metric.values
    .filter((value) => value.labels.network === 'local')
    .reduce((sum, v) => sum + v.value, 0);
}

const mine = (blocks: number) =>
  w.local.publicClient.request({
    method: 'anvil_mine' as never,
    params: [`0x${blocks.toString(16)}`] as never,
  });

const record = async (key: string, token: string) =>
  (await w.api('GET', `/integration/payment-requests/${token}`, key)).body;

async function spaceState(spaceId: string) {
  const transfers = await w.h.db
    .selectFrom('chain_transfers')
    .select(['status', 'source', 'suspect_since_block'])
    .where('space_id', '=', spaceId)
    .execute();
  const events = await w.h.db
    .selectFrom('outbox_events')
    .select('event')
    .where('space_id', '=', spaceId)
    .orderBy('created_at')
    .execute();
  return { transfers, events: events.map((row) => row.event) };
}

/** A seller with a request for `amount` and a payer who sent it to the seller's address. */
async function paidByTransfer(amount: string, baseUnits: bigint) {
  const s = await w.seller();
  const request = await w.mint(s.key.key, amount, { account_id: s.account.id });
  const payer = await fundedPayer(w, baseUnits);
  await sendTokenTransfer(w, payer, s.address as Address, baseUnits);
  return { s, request };
}

/** Runs a watch round under `fault` on `methods`; answers how far the unknown figure moved. */
async function roundUnder(fault: RpcFault, methods: string[]) {
  const before = await unknownCount();
  for (const method of methods) proxy.inject(method, fault);
  try {
    await watchOnce(faulty);
  } finally {
    proxy.clear();
  }
  return (await unknownCount()) - before;
}

describe('booking under node faults', () => {
  for (const { name, fault } of FAILING_FAULTS) {
    it(`books nothing while the logs read ends in ${name}, then books the transfer once`, async () => {
      // The cursor of a previous test may be behind: a healthy round first catches it up.
      await watchOnce(direct);
      const { s, request } = await paidByTransfer('3', 3_000_000n);
      const before = await spaceState(s.spaceId);
      const moved = await roundUnder(fault, ['eth_getLogs']);
      expect(moved).toBeGreaterThan(0);
      expect(await spaceState(s.spaceId)).toEqual(before);
      expect(await record(s.key.key, request.token)).toMatchObject({
        status: 'active',
        amount_received: '0.00000000',
      });
      await watchOnce(faulty);
      await watchOnce(faulty);
      expect(await record(s.key.key, request.token)).toMatchObject({
        status: 'paid',
        amount_received: '3.00000000',
      });
      expect((await spaceState(s.spaceId)).transfers).toHaveLength(1);
    }, 120_000);
  }

  it('books nothing while the sender of a logged transaction cannot be read', async () => {
    await watchOnce(direct);
    const { s, request } = await paidByTransfer('2', 2_000_000n);
    expect(await roundUnder(FAULTS.limitExceeded, ['eth_getTransactionByHash'])).toBeGreaterThan(0);
    expect((await spaceState(s.spaceId)).transfers).toHaveLength(0);
    await watchOnce(faulty);
    expect(await record(s.key.key, request.token)).toMatchObject({ status: 'paid' });
  }, 120_000);
});

describe('the reorganisation check under node faults', () => {
  for (const { name, fault } of FAILING_FAULTS) {
    it(`reverses nothing while blocks and receipts end in ${name}`, async () => {
      // The bookings of earlier tests leave the reorganisation window, so each round below reads
      // this test's block alone: a held read costs the client its whole timeout, once per block.
      await mine(Number(REORG_WINDOW) + 1);
      await watchOnce(direct);
      const { s, request } = await paidByTransfer('4', 4_000_000n);
      await watchOnce(faulty);
      expect(await record(s.key.key, request.token)).toMatchObject({ status: 'paid' });
      const before = await spaceState(s.spaceId);
      // Rounds a block apart under the fault: the 30 seconds of 429s, in three rounds.
      for (let round = 0; round < 3; round++) {
        const blocksAsked = proxy.seen('eth_getBlockByNumber');
        expect(
          await roundUnder(fault, ['eth_getBlockByNumber', 'eth_getTransactionReceipt']),
        ).toBeGreaterThan(0);
        // The round asked the node for a block, and the fault answered it.
        expect(proxy.seen('eth_getBlockByNumber')).toBeGreaterThan(blocksAsked);
        await mine(1);
      }
      expect(await spaceState(s.spaceId)).toEqual(before);
      expect(await record(s.key.key, request.token)).toMatchObject({
        status: 'paid',
        amount_received: '4.00000000',
      });
      await watchOnce(faulty);
      expect(await spaceState(s.spaceId)).toEqual(before);
    }, 120_000);
  }

  it('does not believe a node whose head is below the booked block', async () => {
    await watchOnce(direct);
    const s = await w.seller();
    await w.mint(s.key.key, '1', { account_id: s.account.id });
    const payer = await fundedPayer(w, 1_000_000n);
    const snapshot = (await w.local.publicClient.request({ method: 'evm_snapshot' as never })) as string;
    await sendTokenTransfer(w, payer, s.address as Address, 1_000_000n);
    await watchOnce(faulty);
    const before = await spaceState(s.spaceId);
    expect(before.transfers).toHaveLength(1);
    // A real reorganisation happens, but the only node reports a head 50 blocks back.
    await w.local.publicClient.request({ method: 'evm_revert' as never, params: [snapshot] as never });
    await mine(2);
    const moved = await unknownCount();
    proxy.inject('eth_blockNumber', FAULTS.lagging(50));
    try {
      await watchOnce(faulty);
      await mine(1);
      await watchOnce(faulty);
    } finally {
      proxy.clear();
    }
    expect(await unknownCount()).toBeGreaterThan(moved);
    expect(await spaceState(s.spaceId)).toEqual(before);
    // The node catches up: the evidence is seen on two rounds a block apart, and only then undone.
    await watchOnce(faulty);
    await mine(1);
    expect((await watchOnce(faulty))[0]!.reversed).toBe(1);
  }, 120_000);

  it('a real reorganisation under intermittent faults is reversed once and booked again once when mined again', async () => {
    await watchOnce(direct);
    const s = await w.seller();
    const request = await w.mint(s.key.key, '6', { account_id: s.account.id });
    const payer = await fundedPayer(w, 6_000_000n);
    const snapshot = (await w.local.publicClient.request({ method: 'evm_snapshot' as never })) as string;
    const hash = await sendTokenTransfer(w, payer, s.address as Address, 6_000_000n);
    const raw = await w.local.publicClient.request({
      method: 'eth_getRawTransactionByHash' as never,
      params: [hash] as never,
    });
    await watchOnce(faulty);
    expect(await record(s.key.key, request.token)).toMatchObject({ status: 'paid' });
    await w.local.publicClient.request({ method: 'evm_revert' as never, params: [snapshot] as never });
    await mine(2);
    // Evidence seen once, then a round of 429s, then evidence a block later: reversed once.
    await watchOnce(faulty);
    await mine(1);
    await roundUnder(FAULTS.rateLimited, ['eth_getTransactionReceipt']);
    await mine(1);
    const report = await watchOnce(faulty);
    expect(report[0]!.reversed).toBe(1);
    expect(await record(s.key.key, request.token)).toMatchObject({
      status: 'active',
      amount_received: '0.00000000',
    });
    await mine(1);
    expect((await watchOnce(faulty))[0]!.reversed).toBe(0);
    // The same signed transaction is mined again: booked again, once.
    await w.local.publicClient.request({ method: 'eth_sendRawTransaction' as never, params: [raw] as never });
    await mine(1);
    await roundUnder(FAULTS.timeout, ['eth_getTransactionReceipt']);
    await watchOnce(faulty);
    await watchOnce(faulty);
    expect(await record(s.key.key, request.token)).toMatchObject({
      status: 'paid',
      amount_received: '6.00000000',
    });
    const state = await spaceState(s.spaceId);
    expect(state.transfers.map((row) => row.status).sort()).toEqual(['booked', 'reversed']);
  }, 180_000);
});

describe('the x402 settlement follower under node faults', () => {
  it('records nothing while receipts and logs fail, then follows the settlement once', async () => {
    await watchOnce(direct);
    const s = await w.seller();
    const paid = await w.mint(s.key.key, '2', { account_id: s.account.id });
    const payer = await w.payer(10_000_000n);
    const res = await w.payingFetch(payer)(paid.url, { headers: { accept: 'application/json' } });
    // The body says why, should the payment be refused (it was once, 409, in a full CI pass).
    expect(res.status, await res.text()).toBe(200);
    const before = await spaceState(s.spaceId);
    expect(before.transfers).toHaveLength(0);
    for (const { fault } of FAILING_FAULTS.slice(0, 3)) {
      expect(await roundUnder(fault, ['eth_getTransactionReceipt', 'eth_getLogs'])).toBeGreaterThan(0);
    }
    expect(await spaceState(s.spaceId)).toEqual(before);
    await watchOnce(faulty);
    await watchOnce(faulty);
    const after = await spaceState(s.spaceId);
    expect(after.transfers).toEqual([{ status: 'booked', source: 'x402', suspect_since_block: null }]);
    expect(after.events).toEqual(before.events);
  }, 120_000);
});
