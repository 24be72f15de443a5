import type { Abi, PublicClient } from 'viem';

// A gas wallet sends the same kind of call again and again (transferWithAuthorization on one
// token). Asking the node to fill every transaction (eth_fillTransaction: gas, fees) costs a
// round trip per payment, so the answers are kept: the gas limit learnt once per contract call
// (with room to spare: unused gas is not charged), the fee caps for a couple of seconds (with
// room for the base fee to double, which takes several full blocks).

/** How long fee caps are reused. */
const FEES_TTL_MS = 2_000;
/** The gas limit is this multiple of the first estimate: recipients new to the token cost more. */
const GAS_HEADROOM = 2n;

export type ContractCall = {
  address: `0x${string}`;
  abi: Abi | readonly unknown[];
  functionName: string;
  args?: readonly unknown[];
};

export type SendPlan = {
  chainId: number;
  gas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
};

export type SendPlanner = {
  /** Gas and fee caps for a call, or undefined when the chain takes no EIP-1559 fees. */
  plan(call: ContractCall, from: `0x${string}`): Promise<SendPlan | undefined>;
  /** Forgets what was learnt (after a transaction failed: its limit may have been too low). */
  forget(): void;
};

export function createSendPlanner(client: PublicClient, chainId: number): SendPlanner {
  const gasByCall = new Map<string, Promise<bigint>>();
  let fees:
    | { at: number; value: Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | undefined> }
    | undefined;

  const feeCaps = () => {
    const now = Date.now();
    if (!fees || now - fees.at > FEES_TTL_MS) {
      const value = Promise.all([
        client.getBlock({ blockTag: 'latest' }),
        client.estimateMaxPriorityFeePerGas(),
      ]).then(([block, tip]) =>
        block.baseFeePerGas === null || block.baseFeePerGas === undefined
          ? undefined
          : { maxFeePerGas: block.baseFeePerGas * 2n + tip, maxPriorityFeePerGas: tip },
      );
      fees = { at: now, value };
      value.catch(() => {
        fees = undefined;
      });
    }
    return fees.value;
  };

  const gasFor = (call: ContractCall, from: `0x${string}`) => {
    const key = `${call.address.toLowerCase()}:${call.functionName}`;
    let gas = gasByCall.get(key);
    if (!gas) {
      gas = client
        .estimateContractGas({ ...call, account: from } as never)
        .then((estimate) => estimate * GAS_HEADROOM);
      gasByCall.set(key, gas);
      gas.catch(() => gasByCall.delete(key));
    }
    return gas;
  };

  return {
    async plan(call, from) {
      const [gas, caps] = await Promise.all([gasFor(call, from), feeCaps()]);
      return caps ? { chainId, gas, ...caps } : undefined;
    },
    forget() {
      gasByCall.clear();
      fees = undefined;
    },
  };
}
