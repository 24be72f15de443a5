import { type Address, createPublicClient, custom, http } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Chain, LocalChain } from '../../src/platform/chain/chain.ts';
import { createSendPlanner } from '../../src/platform/chain/send-plan.ts';
import { TEST_USDC_ABI } from '../../src/platform/chain/token.ts';
import { startTestChain } from './chain-setup.ts';

let chain: Chain;
let local: LocalChain;
/** RPC methods the planner's client asked for, in order. */
const asked: string[] = [];
let client: Parameters<typeof createSendPlanner>[0];

beforeAll(async () => {
  chain = await startTestChain();
  local = chain.local!;
  const node = http(local.rpcUrl)({ chain: local.publicClient.chain });
  client = createPublicClient({
    chain: local.publicClient.chain,
    transport: custom({
      request: (args: { method: string; params?: unknown }) => {
        asked.push(args.method);
        return node.request(args as never);
      },
    }),
  });
}, 90_000);
afterAll(() => chain?.close());

describe('the gas wallet send planner', () => {
  it('learns a call’s gas once (twice the estimate), reuses fee caps for a while, and forgets on request', async () => {
    const planner = createSendPlanner(client, local.network.chainId);
    const mint = {
      address: local.network.token.address,
      abi: TEST_USDC_ABI,
      functionName: 'mint',
      args: [local.walletClient.account.address as Address, 5n],
    };
    const from = local.walletClient.account.address;
    const first = await planner.plan(mint, from);
    const estimate = await local.publicClient.estimateContractGas({ ...mint, account: from } as never);
    const block = await local.publicClient.getBlock();
    expect(first).toBeDefined();
    expect(first!.chainId).toBe(local.network.chainId);
    expect(first!.gas).toBe(estimate * 2n);
    expect(first!.maxFeePerGas).toBeGreaterThanOrEqual(block.baseFeePerGas! * 2n);
    expect(first!.maxFeePerGas - first!.maxPriorityFeePerGas).toBeGreaterThanOrEqual(block.baseFeePerGas!);

    asked.length = 0;
    expect(await planner.plan(mint, from)).toEqual(first);
    expect(asked).toEqual([]);

    // A transaction sent with the plan is mined without asking the node to fill anything.
    const hash = await local.walletClient.writeContract({ ...mint, ...first! } as never);
    const receipt = await local.publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    expect(receipt.gasUsed).toBeLessThan(first!.gas);

    planner.forget();
    await planner.plan(mint, from);
    expect(asked).toContain('eth_estimateGas');
    expect(asked).toContain('eth_getBlockByNumber');
  });
});
