import { type PendingSettlementStore, x402Facilitator } from '@x402/core/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import type { Logger } from 'pino';
import type { Abi, VerifyTypedDataParameters } from 'viem';
import type { Chain } from '../../platform/chain/chain.ts';
import type { ConfiguredNetwork } from '../../platform/chain/networks.ts';
import { createPlannedSender, createSendPlanner } from '../../platform/chain/send-plan.ts';
import { sha256Hex } from '../../platform/crypto.ts';
import type { Db } from '../../platform/db/database.ts';
import { withSessionLock } from '../../platform/db/session-lock.ts';
import * as store from './store.ts';

// The x402 facilitator Tollbook runs: the maintained @x402/core facilitator with @x402/evm's
// exact scheme, one registration per configured network, signing with the gas wallet. Every
// signature, amount, time-window, nonce and simulation check is theirs; this file only wires
// viem clients and our PostgreSQL-backed pending-settlement store into it.

/** How long a settlement waits for its receipt before answering `settlement_pending`. */
const CONFIRMATION_TIMEOUT_MS = 60_000;

export type Facilitator = {
  engine: x402Facilitator;
  /** Networks with a gas wallet, by CAIP-2 id: only these can be settled. */
  networks: Map<string, ConfiguredNetwork>;
  gasWallet: string | undefined;
  /**
   * Signatures (by pendingKey) whose claim this process just created: no earlier attempt can
   * have broadcast them, so the pending store need not be asked. Saves two round trips a payment.
   */
  firstAttempts: Set<string>;
};

/** The pending store's key for a signature, as the claims hash it. */
export function pendingKey(signature: string): string {
  return sha256Hex(signature.toLowerCase());
}

/** The scheme's pending-settlement store, shared by every process through PostgreSQL. */
function pendingStore(db: Db, firstAttempts: Set<string>): PendingSettlementStore {
  return {
    get: async (key) =>
      firstAttempts.has(pendingKey(key)) ? undefined : store.findPendingTransaction(db, pendingKey(key)),
    set: (key, txHash) => store.savePendingTransaction(db, pendingKey(key), txHash, new Date()),
    delete: async (key) => {
      if (!firstAttempts.has(pendingKey(key))) await store.deletePendingTransaction(db, pendingKey(key));
    },
  };
}

/** Runs one send at a time: what a gas wallet's lane does with each send. */
type Lane = <T>(send: () => Promise<T>) => Promise<T>;

/**
 * The lane across processes sharing PostgreSQL: a session lock on (chain, wallet), held on a
 * connection of its own outside any transaction from before the nonce is read until the node
 * answered the broadcast (or the send ended unknown), so each sender's nonce read already holds
 * every other process's sends. The lock is not held until the transaction is mined.
 */
function sharedLane(db: Db, chainId: number, wallet: string, logger: Logger | undefined): Lane {
  const name = `gas-wallet:${chainId}:${wallet.toLowerCase()}`;
  return (send) => withSessionLock(db, name, send, logger);
}

/** The lane in this process only (the embedded database's case: one process). */
function localLane(): Lane {
  let last: Promise<unknown> = Promise.resolve();
  return <T>(send: () => Promise<T>): Promise<T> => {
    const next = last.then(send, send);
    last = next.catch(() => undefined);
    return next;
  };
}

/** How long a wallet's code, once read, answers again (the two reads one settlement makes). */
const PAYER_CODE_TTL_MS = 1_000;

/**
 * Reads contract code for the scheme. The token's code is fixed for the life of the process, so
 * it is read once. A payer's code is read live, but one settlement asks twice within
 * milliseconds (to classify the signature, then to verify it): an answer serves for a second.
 */
function codeReader(
  publicClient: { getCode(args: { address: `0x${string}` }): Promise<`0x${string}` | undefined> },
  tokenAddress: string,
) {
  const token = tokenAddress.toLowerCase();
  let tokenCode: Promise<`0x${string}` | undefined> | undefined;
  const recent = new Map<string, { at: number; code: Promise<`0x${string}` | undefined> }>();
  return (address: `0x${string}`) => {
    const key = address.toLowerCase();
    if (key === token) {
      tokenCode ??= publicClient.getCode({ address }).catch((error) => {
        tokenCode = undefined;
        throw error;
      });
      return tokenCode;
    }
    const now = Date.now();
    const known = recent.get(key);
    if (known && now - known.at <= PAYER_CODE_TTL_MS) return known.code;
    if (recent.size > 1_000) recent.clear();
    const code = publicClient.getCode({ address });
    recent.set(key, { at: now, code });
    code.catch(() => recent.delete(key));
    return code;
  };
}

export type FacilitatorOptions = {
  /** Processes share the database (PostgreSQL): serialize gas-wallet sends across them. */
  sharedDatabase: boolean;
  logger?: Logger | undefined;
};

export function createFacilitator(
  db: Db,
  chain: Chain | undefined,
  options: FacilitatorOptions = { sharedDatabase: false },
): Facilitator {
  const engine = new x402Facilitator();
  const firstAttempts = new Set<string>();
  const networks = new Map<string, ConfiguredNetwork>();
  for (const network of chain?.networks.list() ?? []) {
    const clients = chain?.clients(network.name);
    const wallet = clients?.walletClient;
    if (!clients || !wallet) continue;
    const { publicClient } = clients;
    // Embedded PGlite is one process's: an in-process queue is enough there.
    const lane = options.sharedDatabase
      ? sharedLane(db, network.chainId, wallet.account.address, options.logger)
      : localLane();
    const codeOf = codeReader(publicClient, network.token.address);
    const planner = createSendPlanner(publicClient, network.chainId);
    // A key held here signs in this process, at the nonce the node gives in the lane, and a send
    // that ends unknown is followed by its hash (see createPlannedSender).
    const account = wallet.account;
    const planned =
      account.type === 'local' && account.signTransaction
        ? createPlannedSender(
            publicClient,
            { account: { address: account.address, signTransaction: account.signTransaction } },
            network.name,
            options.logger,
          )
        : undefined;
    // viem's clients have every method the scheme needs. The scheme hands over ABIs and typed
    // data as plain records (`readonly unknown[]`, `Record<string, unknown>`); viem types them as
    // its Abi and typed-data definitions, which is what they are.
    const signer = toFacilitatorEvmSigner(
      {
        address: wallet.account.address,
        readContract: (args) => publicClient.readContract({ ...args, abi: args.abi as Abi }),
        verifyTypedData: (args) => publicClient.verifyTypedData(args as VerifyTypedDataParameters),
        writeContract: async (args) => {
          // Gas and fee caps known beforehand spare the node a fill request per payment. A plan
          // that could not be made fails the send before anything leaves.
          const plan = await planner.plan(args, wallet.account.address);
          if (plan && planned) return lane(() => planned.send(args, plan));
          // A chain without EIP-1559 fees, or a key held by the node: viem fills and sends.
          const caps = plan
            ? {
                gas: plan.gas,
                maxFeePerGas: plan.maxFeePerGas,
                maxPriorityFeePerGas: plan.maxPriorityFeePerGas,
              }
            : {};
          return lane(() => wallet.writeContract({ ...args, abi: args.abi as Abi, ...caps }));
        },
        sendTransaction: (args) => lane(() => wallet.sendTransaction(args)),
        waitForTransactionReceipt: async (args) => {
          const receipt = await publicClient.waitForTransactionReceipt(args);
          if (receipt.status !== 'success') planner.forget();
          return receipt;
        },
        getCode: (args) => codeOf(args.address),
      },
      { confirmationTimeoutMs: CONFIRMATION_TIMEOUT_MS },
    );
    // Settlement simulates the transfer before it broadcasts, so a page payment needs no separate
    // verify round (the same checks, and the chain, would be asked twice).
    const scheme = new ExactEvmScheme(signer, {
      pendingSettlementStore: pendingStore(db, firstAttempts),
      simulateInSettle: true,
    });
    engine.register(network.caip2, scheme);
    networks.set(network.caip2, network);
  }
  return { engine, networks, gasWallet: chain?.gasWallet, firstAttempts };
}
