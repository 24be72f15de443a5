import { parseAbi } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Chain, LocalChain } from '../../src/platform/chain/chain.ts';
import { createPlannedSender, createSendPlanner } from '../../src/platform/chain/send-plan.ts';
import { startTestChain } from './chain-setup.ts';

// The gas wallet's planned sends sign while the node is asked for the pending nonce, with the
// nonce the sender expects; the node's answer decides. These tests send real transactions on
// anvil: one after another from the sender, and with another sender using the wallet between
// two of them (as a second server process sharing the gas wallet does).

let chain: Chain;
let local: LocalChain;
beforeAll(async () => {
  chain = await startTestChain();
  local = chain.local!;
}, 60_000);
afterAll(() => chain?.close());

const APPROVE = parseAbi(['function approve(address spender, uint256 value) returns (bool)']);

function sender() {
  const wallet = local.walletClient;
  const account = wallet.account as typeof wallet.account & { signTransaction: never };
  const planner = createSendPlanner(local.publicClient as never, local.network.chainId);
  const send = createPlannedSender(local.publicClient as never, {
    account: { address: account.address, signTransaction: account.signTransaction },
  });
  return async (value: bigint) => {
    const call = {
      address: local.network.token.address,
      abi: APPROVE,
      functionName: 'approve',
      args: [`0x${'2'.repeat(40)}`, value] as const,
    };
    const plan = await planner.plan(call, account.address);
    if (!plan) throw new Error('anvil takes EIP-1559 fees');
    const hash = await send(call, plan);
    return local.publicClient.waitForTransactionReceipt({ hash });
  };
}

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

  it('signs again with the node’s nonce when another sender used the wallet in between', async () => {
    const send = sender();
    expect((await send(4n)).status).toBe('success');
    // Another sender of the same wallet (viem's own nonce handling) takes the nonce this sender
    // would expect next.
    const other = await local.walletClient.sendTransaction({
      to: local.walletClient.account.address,
      value: 0n,
    });
    await local.publicClient.waitForTransactionReceipt({ hash: other });
    const receipt = await send(5n);
    expect(receipt.status).toBe('success');
    const taken = (await local.publicClient.getTransaction({ hash: other })).nonce;
    expect((await local.publicClient.getTransaction({ hash: receipt.transactionHash })).nonce).toBe(
      taken + 1,
    );
  });
});
