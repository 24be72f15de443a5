import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { type Hash, type Hex, parseAbi, TimeoutError } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Chain, LocalChain } from '../../src/platform/chain/chain.ts';
import { chainUnknownTotal } from '../../src/platform/chain/outcome.ts';
import { createPlannedSender, createSendPlanner } from '../../src/platform/chain/send-plan.ts';
import type { Db } from '../../src/platform/db/database.ts';
import type { Database } from '../../src/platform/db/schema.ts';
import { withSessionLock } from '../../src/platform/db/session-lock.ts';
import { startTestChain } from './chain-setup.ts';

// The gas wallet's planned sends, on anvil: each asks the node for the nonce in the wallet's
// lane; a broadcast whose outcome is unknown answers the transaction's hash and is never sent
// again; a refusal is one only when the node does not hold the transaction. On PostgreSQL, two
// database sessions (what two server processes are) send at once through the session lock.

let chain: Chain;
let local: LocalChain;
beforeAll(async () => {
  chain = await startTestChain();
  local = chain.local!;
}, 60_000);
afterAll(() => chain?.close());

const APPROVE = parseAbi(['function approve(address spender, uint256 value) returns (bool)']);

const approve = (value: bigint) => ({
  address: local.network.token.address,
  abi: APPROVE,
  functionName: 'approve',
  args: [`0x${'2'.repeat(40)}`, value] as const,
});

type NodeCalls = {
  nonceReads: number;
  broadcasts: number;
  /** What the broadcast does instead of asking the node plainly. */
  broadcast?: (raw: { serializedTransaction: Hex }) => Promise<Hash>;
  /** Moves the nonce the node reports (a node behind the others). */
  nonceShift?: number;
};

/** A planned sender on the gas wallet, as the facilitator drives it, over a node we can bend. */
function sender(calls: NodeCalls = { nonceReads: 0, broadcasts: 0 }) {
  const wallet = local.walletClient;
  const account = wallet.account as typeof wallet.account & { signTransaction: never };
  const planner = createSendPlanner(local.publicClient, local.network.chainId);
  const client = {
    getTransactionCount: async (args: never) => {
      calls.nonceReads++;
      return (await local.publicClient.getTransactionCount(args)) + (calls.nonceShift ?? 0);
    },
    getTransaction: (args: never) => local.publicClient.getTransaction(args),
    sendRawTransaction: (args: { serializedTransaction: Hex }) => {
      calls.broadcasts++;
      return calls.broadcast ? calls.broadcast(args) : local.publicClient.sendRawTransaction(args);
    },
  };
  const planned = createPlannedSender(
    client as never,
    { account: { address: account.address, signTransaction: account.signTransaction } },
    'local',
  );
  const send = async (value: bigint) => {
    const call = approve(value);
    const plan = await planner.plan(call, account.address);
    if (!plan) throw new Error('anvil takes EIP-1559 fees');
    return planned.send(call, plan);
  };
  return Object.assign(send, { calls });
}

const mined = (hash: Hash) => local.publicClient.waitForTransactionReceipt({ hash });
const nonceOf = async (hash: Hash) => (await local.publicClient.getTransaction({ hash })).nonce;
const walletNonce = () =>
  local.publicClient.getTransactionCount({
    address: local.walletClient.account.address,
    blockTag: 'pending',
  });

const timedOut = () =>
  new TimeoutError({ body: { method: 'eth_sendRawTransaction' }, url: 'http://127.0.0.1' });

async function unknownSends(): Promise<number> {
  const metric = await chainUnknownTotal.get();
  return metric.values
    .filter((value) => value.labels.call === 'sendRawTransaction')
    .reduce((total, value) => total + value.value, 0);
}

describe('planned sends from the gas wallet', () => {
  it('sends one after another, each at the nonce the node gives, all mined', async () => {
    const send = sender();
    const first = await walletNonce();
    const hashes: Hash[] = [];
    for (const value of [1n, 2n, 3n]) {
      const hash = await send(value);
      expect((await mined(hash)).status).toBe('success');
      hashes.push(hash);
    }
    expect(await Promise.all(hashes.map(nonceOf))).toEqual([first, first + 1, first + 2]);
    expect(send.calls.nonceReads).toBe(3);
  });

  it('takes the node’s nonce after someone else sent from the wallet', async () => {
    const send = sender();
    const other = await local.walletClient.sendTransaction({
      to: local.walletClient.account.address,
      value: 0n,
    });
    await mined(other);
    const hash = await send(4n);
    expect((await mined(hash)).status).toBe('success');
    expect(await nonceOf(hash)).toBe((await nonceOf(other)) + 1);
  });

  it('answers the hash of a broadcast that timed out after reaching the node, and sends it once', async () => {
    const calls: NodeCalls = {
      nonceReads: 0,
      broadcasts: 0,
      broadcast: async (raw) => {
        await local.publicClient.sendRawTransaction(raw);
        throw timedOut();
      },
    };
    const send = sender(calls);
    const before = await walletNonce();
    const unknownBefore = await unknownSends();
    const hash = await send(5n);
    expect(calls.broadcasts).toBe(1);
    expect(await unknownSends()).toBe(unknownBefore + 1);
    expect((await mined(hash)).status).toBe('success');
    expect(await nonceOf(hash)).toBe(before);
    expect(await walletNonce()).toBe(before + 1);
  });

  it('never sends a broadcast that timed out before reaching the node again, at any nonce', async () => {
    const calls: NodeCalls = {
      nonceReads: 0,
      broadcasts: 0,
      broadcast: async () => Promise.reject(timedOut()),
    };
    const send = sender(calls);
    const before = await walletNonce();
    const hash = await send(6n);
    expect(calls.broadcasts).toBe(1);
    expect(calls.nonceReads).toBe(1);
    // The node never saw it: the hash is followed (and not found), nothing else was sent.
    await expect(local.publicClient.getTransaction({ hash })).rejects.toThrow();
    expect(await walletNonce()).toBe(before);
  });

  it('throws, having sent nothing, when the node refuses the transaction and does not hold it', async () => {
    // A node whose pending count is one behind: the transaction's nonce is spent, the node says so.
    const calls: NodeCalls = { nonceReads: 0, broadcasts: 0, nonceShift: -1 };
    const send = sender(calls);
    const warm = await sender()(7n);
    await mined(warm);
    const before = await walletNonce();
    await expect(send(8n)).rejects.toThrow();
    expect(calls.broadcasts).toBe(1);
    expect(await walletNonce()).toBe(before);
  });
});

const databaseUrl = process.env.DATABASE_URL;

describe.skipIf(!databaseUrl)('gas wallet sends from two processes sharing PostgreSQL', () => {
  it('never collide on a nonce: every send of both is mined, at consecutive nonces', async () => {
    const sessions = [0, 1].map(
      () =>
        new Kysely<Database>({
          dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: databaseUrl, max: 4 }) }),
        }) as Db,
    );
    try {
      const lock = `gas-wallet:${local.network.chainId}:${local.walletClient.account.address.toLowerCase()}`;
      const before = await walletNonce();
      const sends = sessions.flatMap((db, process) => {
        const send = sender();
        return [0, 1, 2, 3].map((index) =>
          withSessionLock(db, lock, () => send(BigInt(100 + process * 10 + index))),
        );
      });
      const hashes = await Promise.all(sends);
      const receipts = await Promise.all(hashes.map(mined));
      expect(receipts.every((receipt) => receipt.status === 'success')).toBe(true);
      const nonces = (await Promise.all(hashes.map(nonceOf))).sort((a, b) => a - b);
      expect(nonces).toEqual(Array.from({ length: 8 }, (_, index) => before + index));
    } finally {
      await Promise.all(sessions.map((db) => db.destroy()));
    }
  });
});
