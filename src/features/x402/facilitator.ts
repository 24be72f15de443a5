import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { type PendingSettlementStore, x402Facilitator } from '@x402/core/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Chain } from '../../platform/chain/chain.ts';
import type { ConfiguredNetwork } from '../../platform/chain/networks.ts';
import {
  type ContractCall,
  createPlannedSender,
  createSendPlanner,
  type PlannedCall,
  type SendTurn,
} from '../../platform/chain/send-plan.ts';
import { sha256Hex } from '../../platform/crypto.ts';
import type { Db } from '../../platform/db/database.ts';
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

/**
 * What a broadcast made within one settle call must wait for (the page's claim, committed while
 * the scheme checked the authorization). The scheme calls the signer with no context of its
 * own, so the gate travels with the call's async context; a gate that throws stops the send.
 */
const broadcastGate = new AsyncLocalStorage<() => Promise<void>>();

export function withBroadcastGate<T>(gate: () => Promise<void>, run: () => Promise<T>): Promise<T> {
  return broadcastGate.run(gate, run);
}

async function passBroadcastGate(): Promise<void> {
  await broadcastGate.getStore()?.();
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

/**
 * Runs a gas-wallet send while holding a PostgreSQL advisory lock on (chain, wallet): every
 * process sharing the database sends one at a time, so the nonce each one reads (the node's
 * pending count) already includes the other processes' transactions. The lock is held only
 * until the node accepted the transaction, not until it is mined. The send's answer goes back
 * as soon as the node gave it: the unlock (and the connection's release) follows on its own
 * while the caller waits for the receipt, so it costs the payment no round trip. The lock's
 * statement also takes the next turn number (migration 0170), once the lock is held: the send is
 * told its turn, so a sender can tell whether anybody sent between two of its own turns.
 */
function oneSenderAtATime(db: Db, chainId: number, wallet: string, logger: Logger | undefined) {
  const digest = createHash('sha256').update(`gas-wallet:${chainId}:${wallet.toLowerCase()}`).digest();
  const [high, low] = [digest.readInt32BE(0), digest.readInt32BE(4)];
  return <T>(send: (turn: SendTurn) => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      db.connection()
        .execute(async (connection) => {
          // The subquery (kept apart by OFFSET 0) yields its row once the lock is held, so the
          // turn is drawn after every earlier holder's.
          const locked = await sql<{ turn: string }>`
            SELECT nextval('gas_wallet_turns')::text AS turn
            FROM (SELECT pg_advisory_lock(${high}, ${low}) OFFSET 0) AS locked`.execute(connection);
          try {
            resolve(await send(BigInt(locked.rows[0]!.turn)));
          } catch (error) {
            reject(error);
          } finally {
            await sql`SELECT pg_advisory_unlock(${high}, ${low})`.execute(connection);
          }
        })
        .catch((error: unknown) => {
          // Before the send: the lock was not taken, so the send fails. After it, the answer is
          // already given and only the failed unlock is reported (as before this change, only a
          // broken connection fails it, and the end of its session frees the lock).
          reject(error);
          logger?.error({ err: error }, 'the gas wallet lock failed');
        });
    });
}

/** Runs sends one at a time in this process (the embedded database's case: one process). */
function oneAtATimeHere() {
  let last: Promise<unknown> = Promise.resolve();
  let turns = 0n;
  return <T>(send: (turn: SendTurn) => Promise<T>): Promise<T> => {
    const run = () => send(++turns);
    const next = last.then(run, run);
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
    const clients = chain!.clients(network.name);
    const wallet = clients?.walletClient;
    if (!clients || !wallet) continue;
    const { publicClient } = clients;
    // Embedded PGlite is one process's: an in-process queue is enough there.
    const serialize = options.sharedDatabase
      ? oneSenderAtATime(db, network.chainId, wallet.account.address, options.logger)
      : oneAtATimeHere();
    const codeOf = codeReader(publicClient, network.token.address);
    const planner = createSendPlanner(publicClient as never, network.chainId);
    // A key held here signs while the node is asked for the nonce, or knows the nonce without
    // asking after its own mined send in the turn before (see createPlannedSender).
    const account = wallet.account;
    const sendPlanned =
      account.type === 'local' && account.signTransaction
        ? createPlannedSender(publicClient as never, {
            account: { address: account.address, signTransaction: account.signTransaction },
          })
        : undefined;
    // viem's clients have every method the scheme needs; their argument types are stricter than
    // the scheme's structural ones, hence the casts at this one seam.
    const signer = toFacilitatorEvmSigner(
      {
        address: wallet.account.address,
        readContract: (args) => publicClient.readContract(args as never),
        verifyTypedData: (args) => publicClient.verifyTypedData(args as never),
        writeContract: async (args) => {
          const gate = passBroadcastGate();
          gate.catch(() => {});
          // Gas and fee caps known beforehand spare the node a fill request per payment.
          const plan = await planner
            .plan(args as ContractCall, wallet.account.address)
            .catch(() => undefined);
          // Signed while the gate and the turn are awaited; broadcast only past both.
          const prepared = plan && sendPlanned?.prepare(args as PlannedCall, plan);
          await gate;
          if (prepared) return serialize((turn) => prepared.send(turn));
          return serialize(() => wallet.writeContract({ ...(args as object), ...plan } as never));
        },
        sendTransaction: async (args) => {
          await passBroadcastGate();
          return serialize(() => wallet.sendTransaction(args as never));
        },
        waitForTransactionReceipt: async (args) => {
          const receipt = await publicClient.waitForTransactionReceipt(args);
          sendPlanned?.mined(receipt.transactionHash);
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
