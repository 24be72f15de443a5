import type { Logger } from 'pino';
import {
  type Abi,
  type Address,
  BaseError,
  type Chain,
  concatHex,
  encodeFunctionData,
  type Hash,
  type Hex,
  keccak256,
  type PublicClient,
  RpcRequestError,
  type TransactionSerializableEIP1559,
  type Transport,
} from 'viem';
import { chainUnknownTotal, describeChainError, readChain } from './outcome.ts';

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

/** A public client of a configured chain (chain/chain.ts connects them all with their chain). */
type ChainClient = PublicClient<Transport, Chain>;

export function createSendPlanner(client: ChainClient, chainId: number): SendPlanner {
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
        .estimateContractGas({
          address: call.address,
          abi: call.abi as Abi,
          functionName: call.functionName,
          args: call.args,
          account: from,
        })
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

/** A transaction as signed: what a replacement at its nonce needs, and its hash. */
export type SignedSend = {
  hash: Hash;
  /** The first transaction's hash when this one replaces it at its nonce. */
  firstHash?: Hash | undefined;
  from: Address;
  nonce: number;
  transaction: TransactionSerializableEIP1559;
};

export type PlannedSender = {
  /**
   * Signs and broadcasts a planned call at the nonce the node gives, and answers its hash.
   * Throws only when nothing was sent: the nonce could not be read, or the node refused the
   * transaction and does not hold it. Call it while holding the wallet's lane. `onSigned`, when
   * given, is told of the signed transaction instead of the sender's own (to record it on the
   * lane's session).
   */
  send(call: PlannedCall, plan: SendPlan, onSigned?: (signed: SignedSend) => Promise<void>): Promise<Hash>;
  /**
   * Signs `previous` again at its own nonce with fees raised by at least REPLACEMENT_RAISE (and
   * at least the current plan's), and broadcasts it: the stuck transaction's replacement. Never a
   * new nonce. Answers the replacement's hash, or throws when the node refused it (say because
   * the nonce was mined meanwhile).
   */
  replace(previous: SignedSend, current: SendPlan | undefined): Promise<SignedSend>;
};

/**
 * The fee caps of a replacement: each raised by at least one eighth (12.5 %, rounded up, at
 * least 1 wei) over the stuck transaction's, as nodes require to take a replacement at the same
 * nonce, and never below what the chain asks now.
 */
export function raisedFees(
  previous: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
  current?: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | undefined,
): { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } {
  const raise = (value: bigint) => value + (value + 7n) / 8n + (value === 0n ? 1n : 0n);
  const maxPriorityFeePerGas = max(raise(previous.maxPriorityFeePerGas), current?.maxPriorityFeePerGas ?? 0n);
  const maxFeePerGas = max(raise(previous.maxFeePerGas), current?.maxFeePerGas ?? 0n, maxPriorityFeePerGas);
  return { maxFeePerGas, maxPriorityFeePerGas };
}

function max(...values: bigint[]): bigint {
  return values.reduce((largest, value) => (value > largest ? value : largest));
}

/**
 * JSON-RPC's internal error: the node answered, but may have taken the transaction before it
 * failed, so it is no refusal.
 */
const RPC_INTERNAL_ERROR = -32603;

/** The node answered the send with an error of its own: it says it did not take the transaction. */
function refusedByNode(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  const answer = error.walk((cause) => cause instanceof RpcRequestError);
  return answer instanceof RpcRequestError && answer.code !== RPC_INTERNAL_ERROR;
}

/**
 * Sends planned calls from a wallet whose key is in this process. The caller runs one send at a
 * time per wallet (its lane: a session lock shared by the processes on one database, or a queue
 * in the one process of an embedded database), so the node's pending count, read in the lane,
 * already holds every earlier send.
 *
 * A broadcast ends three ways. The node answers with the hash: sent. The node refuses (a JSON-RPC
 * error of its own) and, asked by the transaction's hash, does not hold it: nothing was sent, and
 * the send throws. Anything else (a timeout, a cut connection, HTTP 5xx, the refusal's check
 * unanswered) is unknown: the raw transaction may have reached the node, so the send answers the
 * transaction's hash (known before the broadcast) and the caller follows that hash. It is never
 * sent again, and never again at another nonce.
 */
/**
 * Broadcasts signed transactions: the hash when sent or unknown (logged, counted); throws when
 * the node refused and does not hold the transaction.
 */
function broadcaster(publicClient: ChainClient, network: string, logger: Logger | undefined) {
  /** What the node holds under `hash` after it refused the broadcast. */
  const afterRefusal = async (hash: Hash, refusal: unknown): Promise<Hash> => {
    const held = await readChain(network, 'getTransaction', () => publicClient.getTransaction({ hash }));
    if (held.kind === 'absent') throw refusal;
    if (held.kind === 'unknown')
      logger?.warn({ tx: hash, reason: held.reason }, 'a refused gas wallet send could not be checked');
    return hash;
  };

  /** Broadcasts a signed transaction: its hash, sent or unknown; throws when refused. */
  return async (signed: Hex, hash: Hash, nonce: number): Promise<Hash> => {
    try {
      return await publicClient.sendRawTransaction({ serializedTransaction: signed });
    } catch (error) {
      if (refusedByNode(error)) return afterRefusal(hash, error);
      chainUnknownTotal.inc({ network, call: 'sendRawTransaction' });
      logger?.warn(
        { tx: hash, nonce, reason: describeChainError(error) },
        'a gas wallet send ended unknown; it is followed by its hash',
      );
      return hash;
    }
  };
}

export function createPlannedSender(
  publicClient: ChainClient,
  wallet: LocalWallet,
  network: string,
  logger?: Logger | undefined,
  /** Told of every signed transaction before it is broadcast (to record its hash first). */
  onSigned: (signed: SignedSend) => Promise<void> = async () => {},
): PlannedSender {
  const address = wallet.account.address;
  const transactionOf = (call: PlannedCall, plan: SendPlan): TransactionSerializableEIP1559 => {
    const encoded = encodeFunctionData({
      abi: call.abi as Abi,
      functionName: call.functionName,
      args: call.args as readonly unknown[],
    });
    return {
      type: 'eip1559',
      chainId: plan.chainId,
      to: call.address,
      data: call.dataSuffix ? concatHex([encoded, call.dataSuffix]) : encoded,
      gas: plan.gas,
      maxFeePerGas: plan.maxFeePerGas,
      maxPriorityFeePerGas: plan.maxPriorityFeePerGas,
    };
  };

  const broadcast = broadcaster(publicClient, network, logger);

  const signAndSend = async (
    transaction: TransactionSerializableEIP1559,
    nonce: number,
    firstHash: Hash | undefined,
    tell: (signed: SignedSend) => Promise<void>,
  ) => {
    const signed = await wallet.account.signTransaction({ ...transaction, nonce });
    const hash = keccak256(signed);
    const record: SignedSend = {
      hash,
      firstHash,
      from: address,
      nonce,
      transaction: { ...transaction, nonce },
    };
    await tell(record);
    await broadcast(signed, hash, nonce);
    return record;
  };

  return {
    async send(call, plan, tell = onSigned) {
      const count = await readChain(network, 'getTransactionCount', () =>
        publicClient.getTransactionCount({ address, blockTag: 'pending' }),
      );
      if (count.kind !== 'found')
        throw new Error(`The gas wallet's next nonce could not be read; nothing was sent.`);
      return (await signAndSend(transactionOf(call, plan), count.value, undefined, tell)).hash;
    },
    async replace(previous, current) {
      const fees = raisedFees(
        {
          maxFeePerGas: previous.transaction.maxFeePerGas ?? 0n,
          maxPriorityFeePerGas: previous.transaction.maxPriorityFeePerGas ?? 0n,
        },
        current,
      );
      return signAndSend(
        { ...previous.transaction, ...fees },
        previous.nonce,
        previous.firstHash ?? previous.hash,
        onSigned,
      );
    },
  };
}
