import {
  type Abi,
  type Address,
  concatHex,
  encodeFunctionData,
  type Hash,
  type Hex,
  type PublicClient,
  type TransactionSerializableEIP1559,
} from 'viem';

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

/** A contract call as the x402 scheme asks the signer to send it. */
export type PlannedCall = ContractCall & { dataSuffix?: Hex | undefined };

type LocalWallet = {
  account: {
    address: Address;
    signTransaction(transaction: TransactionSerializableEIP1559): Promise<Hex>;
  };
};

/**
 * Sends planned calls from a wallet whose key is in this process, one at a time (the caller
 * serializes: a process-wide queue, and across processes the gas wallet's lock). The nonce is
 * the node's pending count, read once the caller holds its turn, as viem's nonce manager would;
 * but the transaction is signed meanwhile with the nonce this sender expects (one past the last
 * it sent), so the signing (about a millisecond of CPU) overlaps the node's answer. When the
 * node answers another nonce (another sender used the wallet), the transaction is signed again
 * with it: the pending count decides, as before.
 */
export function createPlannedSender(publicClient: PublicClient, wallet: LocalWallet) {
  let lastNonce: number | undefined;
  return async (call: PlannedCall, plan: SendPlan): Promise<Hash> => {
    const encoded = encodeFunctionData({
      abi: call.abi as Abi,
      functionName: call.functionName,
      args: call.args as readonly unknown[],
    });
    const transaction: TransactionSerializableEIP1559 = {
      type: 'eip1559',
      chainId: plan.chainId,
      to: call.address,
      data: call.dataSuffix ? concatHex([encoded, call.dataSuffix]) : encoded,
      gas: plan.gas,
      maxFeePerGas: plan.maxFeePerGas,
      maxPriorityFeePerGas: plan.maxPriorityFeePerGas,
    };
    const pending = publicClient.getTransactionCount({
      address: wallet.account.address,
      blockTag: 'pending',
    });
    pending.catch(() => {});
    let early: { nonce: number; signed: Hex } | undefined;
    if (lastNonce !== undefined) {
      // One turn of the event loop lets the nonce request leave before the CPU-bound signing.
      await new Promise((resolve) => setImmediate(resolve));
      const nonce = lastNonce + 1;
      early = { nonce, signed: await wallet.account.signTransaction({ ...transaction, nonce }) };
    }
    const nonce = await pending;
    const signed =
      early?.nonce === nonce ? early.signed : await wallet.account.signTransaction({ ...transaction, nonce });
    const hash = await publicClient.sendRawTransaction({ serializedTransaction: signed });
    lastNonce = nonce;
    return hash;
  };
}
