import {
  type Abi,
  type Address,
  BaseError,
  concatHex,
  encodeFunctionData,
  type Hash,
  type Hex,
  type PublicClient,
  RpcRequestError,
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
 * The sender's turn at the wallet, numbered by whoever hands out the turns (the gas wallet's
 * lock across processes, or an in-process queue). Consecutive numbers mean nobody else sent
 * through that lock in between.
 */
export type SendTurn = bigint;

export type PlannedSender = {
  /**
   * Prepares a planned call before the caller's turn: it is signed meanwhile. `send` broadcasts
   * it once the caller holds the wallet for `turn`, until `send` answers.
   */
  prepare(call: PlannedCall, plan: SendPlan): { send(turn: SendTurn): Promise<Hash> };
  /** A receipt was seen for `hash` (whatever its status: its nonce is spent). */
  mined(hash: Hash): void;
};

/** The node answered the send with an error (so it did not take the transaction). */
function refusedByNode(error: unknown): boolean {
  return error instanceof BaseError && error.walk((cause) => cause instanceof RpcRequestError) !== null;
}

/**
 * Sends planned calls from a wallet whose key is in this process, one at a time (the caller
 * serializes: a process-wide queue, and across processes the gas wallet's lock).
 *
 * A call is signed while the caller waits for its turn, with the nonce this sender expects (one
 * past the last it sent), so the signing (about a millisecond of CPU) is off the payment's path.
 * In the turn, the nonce is known without asking the node when this sender's last transaction
 * was seen mined and the turn comes right after the one it was sent in: nobody sent through the
 * lock since, and a mined nonce cannot be taken back. If someone sent from the wallet outside
 * the lock meanwhile (the development faucet), the node refuses the send, and only then is
 * asked. Otherwise the nonce is the node's pending count, read once the caller holds its turn,
 * as viem's nonce manager would. A nonce other than the one signed for is signed again: the
 * node decides, as before.
 */
export function createPlannedSender(publicClient: PublicClient, wallet: LocalWallet): PlannedSender {
  let last: { nonce: number; turn: SendTurn; hash: Hash; mined: boolean } | undefined;
  const pendingCount = () =>
    publicClient.getTransactionCount({ address: wallet.account.address, blockTag: 'pending' });
  const broadcast = async (signed: Hex, nonce: number, turn: SendTurn) => {
    const hash = await publicClient.sendRawTransaction({ serializedTransaction: signed });
    last = { nonce, turn, hash, mined: false };
    return hash;
  };

  const prepare = (call: PlannedCall, plan: SendPlan) => {
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
    const sign = (nonce: number) => wallet.account.signTransaction({ ...transaction, nonce });
    // One turn of the event loop first lets the request for the turn leave before the CPU-bound
    // signing.
    const early = new Promise((resolve) => setImmediate(resolve)).then(async () => {
      if (last === undefined) return undefined;
      const nonce = last.nonce + 1;
      return { nonce, signed: await sign(nonce) };
    });
    early.catch(() => {});
    const signedWith = async (nonce: number) => {
      const signed = await early.catch(() => undefined);
      return signed?.nonce === nonce ? signed.signed : sign(nonce);
    };
    const send = async (turn: SendTurn): Promise<Hash> => {
      const known = last?.mined && turn === last.turn + 1n ? last.nonce + 1 : undefined;
      if (known !== undefined) {
        try {
          return await broadcast(await signedWith(known), known, turn);
        } catch (error) {
          // Sent again only when the node refused it and its pending count moved past the nonce
          // used: then another sender took that nonce. A send that may have reached the node
          // (a timeout) is never repeated.
          const nonce = await pendingCount();
          if (nonce === known || !refusedByNode(error)) throw error;
          return broadcast(await signedWith(nonce), nonce, turn);
        }
      }
      const nonce = await pendingCount();
      return broadcast(await signedWith(nonce), nonce, turn);
    };
    return { send };
  };

  return {
    prepare,
    mined(hash) {
      if (last?.hash === hash) last.mined = true;
    },
  };
}
