import { type PendingSettlementStore, x402Facilitator } from '@x402/core/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import type { Logger } from 'pino';
import type { Abi, VerifyTypedDataParameters } from 'viem';
import { defined } from '../../core/assert.ts';
import type { Chain, Clients } from '../../platform/chain/chain.ts';
import type { ConfiguredNetwork } from '../../platform/chain/networks.ts';
import { createPlannedSender, createSendPlanner, type SignedSend } from '../../platform/chain/send-plan.ts';
import { sha256Hex } from '../../platform/crypto.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import { broadcastRow, createLanePool, type Follower, type Lane, waitForSettlement } from './lanes.ts';
import * as store from './store.ts';

// The x402 facilitator Tollbook runs: the maintained @x402/core facilitator with @x402/evm's
// exact scheme, one registration per configured network, signing with the gas wallet. Every
// signature, amount, time-window, nonce and simulation check is theirs; this file only wires
// viem clients and our PostgreSQL-backed pending-settlement store into it.

/** How long a settlement waits for its receipt before answering `settlement_pending`. */
const CONFIRMATION_TIMEOUT_MS = 60_000;
/** How long a settlement transaction may stay unmined before it is replaced at its nonce. */
const REPLACE_AFTER_MS = 30_000;

export type Facilitator = {
  engine: x402Facilitator;
  /** Networks with a gas wallet, by CAIP-2 id: only these can be settled. */
  networks: Map<string, ConfiguredNetwork>;
  gasWallet: string | undefined;
  /** Per network (CAIP-2): its lanes and how its settlements are followed to a receipt. */
  followers: Map<string, Follower>;
  /**
   * The transaction that mined, by the first transaction's hash, for settlements this process
   * waited for: a replacement may have mined instead of the first. Taken by putOnChain.
   */
  minedAs: Map<string, string>;
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
  /** GAS_REPLACE_AFTER_SECONDS, in ms (30 s unless set). */
  replaceAfterMs?: number | undefined;
  /** How long a settlement waits for its receipt before `settlement_pending` (60 s unless set). */
  confirmationTimeoutMs?: number | undefined;
};

export function createFacilitator(
  db: Db,
  chain: Chain | undefined,
  options: FacilitatorOptions = { sharedDatabase: false },
): Facilitator {
  const engine = new x402Facilitator();
  const firstAttempts = new Set<string>();
  const networks = new Map<string, ConfiguredNetwork>();
  const followers = new Map<string, Follower>();
  const minedAs = new Map<string, string>();
  for (const network of chain?.networks.list() ?? []) {
    const clients = chain?.clients(network.name);
    const follower = clients && followerFor(db, network, clients, options);
    if (!clients || !follower) continue;
    const signer = schemeSigner(network, clients, follower, minedAs, options);
    // Settlement simulates the transfer before it broadcasts, so a page payment needs no separate
    // verify round (the same checks, and the chain, would be asked twice).
    const scheme = new ExactEvmScheme(signer, {
      pendingSettlementStore: pendingStore(db, firstAttempts),
      simulateInSettle: true,
    });
    engine.register(network.caip2, scheme);
    networks.set(network.caip2, network);
    followers.set(network.caip2, follower);
  }
  return { engine, networks, gasWallet: chain?.gasWallet, followers, minedAs, firstAttempts };
}

/**
 * The network's lanes (one planned sender per gas wallet key held here, each recording what it
 * signs before the broadcast) and how its settlements are followed; undefined without a lane.
 */
function followerFor(
  db: Db,
  network: ConfiguredNetwork,
  clients: Clients,
  options: FacilitatorOptions,
): Follower | undefined {
  const { publicClient } = clients;
  const lanes: Lane[] = [];
  const record = (via: Queryable, signed: SignedSend) =>
    store.recordBroadcast(via, broadcastRow(network.caip2, signed, new Date()));
  for (const wallet of clients.lanes) {
    const account = wallet.account;
    if (account.type !== 'local' || !account.signTransaction) continue;
    const sender = createPlannedSender(
      publicClient,
      { account: { address: account.address, signTransaction: account.signTransaction } },
      network.name,
      options.logger,
      (signed) => record(db, signed),
    );
    lanes.push({ address: account.address, sender, record });
  }
  if (lanes.length === 0) return undefined;
  // Embedded PGlite is one process's: the pool's own bookkeeping is enough there.
  const lock = options.sharedDatabase ? { chainId: network.chainId, logger: options.logger } : undefined;
  return {
    db,
    network: network.caip2,
    chainId: network.chainId,
    publicClient,
    pool: createLanePool(lanes, db, lock),
    replaceAfterMs: options.replaceAfterMs ?? REPLACE_AFTER_MS,
    logger: options.logger,
  };
}

/**
 * The scheme's signer over the network's lanes: every lane's address is a signer; a transfer
 * goes out on a free lane at the nonce the node gives; its receipt is whichever of its
 * transactions mined (a stuck one replaced at its nonce on the way).
 */
function schemeSigner(
  network: ConfiguredNetwork,
  clients: Clients,
  follower: Follower,
  minedAs: Map<string, string>,
  options: FacilitatorOptions,
) {
  const { publicClient } = clients;
  const codeOf = codeReader(publicClient, network.token.address);
  const planner = createSendPlanner(publicClient, network.chainId);
  const first = defined(follower.pool.lanes[0], 'a lane');
  const timeoutMs = options.confirmationTimeoutMs ?? CONFIRMATION_TIMEOUT_MS;
  // viem's clients have every method the scheme needs. The scheme hands over ABIs and typed
  // data as plain records (`readonly unknown[]`, `Record<string, unknown>`); viem types them as
  // its Abi and typed-data definitions, which is what they are.
  const signer = toFacilitatorEvmSigner({
    address: first.address,
    readContract: (args) => publicClient.readContract({ ...args, abi: args.abi as Abi }),
    verifyTypedData: (args) => publicClient.verifyTypedData(args as VerifyTypedDataParameters),
    writeContract: async (args) => {
      // Gas and fee caps known beforehand spare the node a fill request per payment. A plan
      // that could not be made fails the send before anything leaves.
      const plan = await planner.plan(args, first.address);
      if (!plan) throw new Error(`${network.caip2} takes no EIP-1559 fees: its settlements cannot be sent.`);
      // The broadcast is recorded on the session holding the lane, before it is sent.
      return follower.pool.take((lane, session) =>
        lane.sender.send(args, plan, (signed) => lane.record(session, signed)),
      );
    },
    sendTransaction: () => Promise.reject(new Error('Gas wallet lanes send only token transfers.')),
    waitForTransactionReceipt: async (args) => {
      const receipt = await waitForSettlement(follower, args.hash, timeoutMs);
      if (receipt.status !== 'success') planner.forget();
      minedAs.set(args.hash.toLowerCase(), receipt.transactionHash);
      return receipt;
    },
    getCode: (args) => codeOf(args.address),
  });
  return { ...signer, getAddresses: () => follower.pool.lanes.map((lane) => lane.address) };
}
