import { parseAbi } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Chain, LocalChain } from '../../src/platform/chain/chain.ts';
import { createPlannedSender, createSendPlanner } from '../../src/platform/chain/send-plan.ts';
import { startTestChain } from './chain-setup.ts';

// The gas wallet's planned sends sign while the node is asked for the pending nonce, with the
// nonce the sender expects, and the node's answer decides; after the sender's own mined send in
// the turn right before, the nonce is known and the node is not asked. These tests send real
// transactions on anvil: one after another from the sender, with a turn taken by someone else
// (a second server process sharing the gas wallet), and with a send outside the lock.

let chain: Chain;
let local: LocalChain;
beforeAll(async () => {
  chain = await startTestChain();
  local = chain.local!;
}, 60_000);
afterAll(() => chain?.close());

const APPROVE = parseAbi(['function approve(address spender, uint256 value) returns (bool)']);

/** A planned sender on the gas wallet, as the facilitator drives it; counts the nonce reads. */
function sender() {
  const wallet = local.walletClient;
  const account = wallet.account as typeof wallet.account & { signTransaction: never };
  const planner = createSendPlanner(local.publicClient as never, local.network.chainId);
  const counted = { nonceReads: 0 };
  const client = {
    getTransactionCount: (args: never) => {
      counted.nonceReads++;
      return local.publicClient.getTransactionCount(args);
    },
    sendRawTransaction: (args: never) => local.publicClient.sendRawTransaction(args),
  };
  const planned = createPlannedSender(client as never, {
    account: { address: account.address, signTransaction: account.signTransaction },
  });
  let turn = 0n;
  const send = async (value: bigint, turnsSkipped = 0n) => {
    const call = {
      address: local.network.token.address,
      abi: APPROVE,
      functionName: 'approve',
      args: [`0x${'2'.repeat(40)}`, value] as const,
    };
    const plan = await planner.plan(call, account.address);
    if (!plan) throw new Error('anvil takes EIP-1559 fees');
    turn += 1n + turnsSkipped;
    const hash = await planned.prepare(call, plan).send(turn);
    const receipt = await local.publicClient.waitForTransactionReceipt({ hash });
    planned.mined(receipt.transactionHash);
    return receipt;
  };
  return Object.assign(send, { counted });
}

/** Another sender of the same wallet outside the lock (viem's own nonce handling), mined. */
async function sendFromWalletElsewhere() {
  const other = await local.walletClient.sendTransaction({
    to: local.walletClient.account.address,
    value: 0n,
  });
  await local.publicClient.waitForTransactionReceipt({ hash: other });
  return (await local.publicClient.getTransaction({ hash: other })).nonce;
}

const nonceOf = async (receipt: { transactionHash: `0x${string}` }) =>
  (await local.publicClient.getTransaction({ hash: receipt.transactionHash })).nonce;

describe('planned sends from the gas wallet', () => {
  it('sends one after another, each with the next nonce, all mined', async () => {
    const send = sender();
    const first = await local.publicClient.getTransactionCount({
      address: local.walletClient.account.address,
    });
    const receipts = [];
    for (const value of [1n, 2n, 3n]) receipts.push(await send(value));
    expect(receipts.map((receipt) => receipt.status)).toEqual(['success', 'success', 'success']);
    const nonces = await Promise.all(
      receipts.map(
        async (receipt) => (await local.publicClient.getTransaction({ hash: receipt.transactionHash })).nonce,
      ),
    );
    expect(nonces).toEqual([first, first + 1, first + 2]);
  });

  it('asks the node for no nonce after its own mined send in the turn before', async () => {
    const send = sender();
    const first = await send(6n);
    expect(send.counted.nonceReads).toBe(1);
    const second = await send(7n);
    const third = await send(8n);
    expect([second.status, third.status]).toEqual(['success', 'success']);
    expect(send.counted.nonceReads).toBe(1);
    expect([await nonceOf(second), await nonceOf(third)]).toEqual([
      (await nonceOf(first)) + 1,
      (await nonceOf(first)) + 2,
    ]);
  });

  it('asks the node when a turn was taken by someone else since its own (another process)', async () => {
    const send = sender();
    expect((await send(9n)).status).toBe('success');
    const taken = await sendFromWalletElsewhere();
    const receipt = await send(10n, 1n);
    expect(receipt.status).toBe('success');
    expect(send.counted.nonceReads).toBe(2);
    expect(await nonceOf(receipt)).toBe(taken + 1);
  });

  it('signs again with the node’s nonce when another sender used the wallet in between', async () => {
    const send = sender();
    expect((await send(4n)).status).toBe('success');
    // Outside the lock, so the turns stay consecutive: the node refuses the nonce the sender
    // knew, and is asked then.
    const taken = await sendFromWalletElsewhere();
    const receipt = await send(5n);
    expect(receipt.status).toBe('success');
    expect(await nonceOf(receipt)).toBe(taken + 1);
    expect(send.counted.nonceReads).toBe(2);
  });
});
