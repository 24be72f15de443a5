import type { Logger } from 'pino';
import type {
  Address,
  Hash,
  Hex,
  PublicClient,
  TransactionReceipt,
  Transport,
  Chain as ViemChain,
} from 'viem';
import { type ChainRead, readChain } from '../../platform/chain/outcome.ts';
import type { PlannedSender, SignedSend } from '../../platform/chain/send-plan.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import { withFirstFreeLock } from '../../platform/db/session-lock.ts';
import * as store from './store.ts';

// The gas wallet's lanes on one network: each lane is one key with its own nonce sequence, and a
// settlement takes a free one. Across processes sharing PostgreSQL a lane is a session lock on
// (chain, address), tried in order and waited on only when all are held; within a process a lane
// is held by one send at a time, and a send finding every lane busy here queues for the next one
// released. A lane is held from before the nonce read until the node answered the broadcast.
// The send's own statement (the broadcast's record) runs on the session that holds the lane, so a
// held lane never queues for a connection behind the requests sharing the pool.

export type Lane = {
  address: Address;
  sender: PlannedSender;
  /** Records a signed transaction of this lane (before its broadcast) through `via`. */
  record(via: Queryable, signed: SignedSend): Promise<void>;
};

export type LanePool = {
  lanes: readonly Lane[];
  /**
   * Runs `work` on a free lane (waiting for one when all are busy), with the database session to
   * write on while holding it (the lane's lock session on PostgreSQL).
   */
  take<T>(work: (lane: Lane, session: Queryable) => Promise<T>): Promise<T>;
  byAddress(address: string): Lane | undefined;
};

export type LaneLock = { chainId: number; logger?: Logger | undefined };

/** The pool of `lanes`; with `lock`, shared with the other processes of one PostgreSQL. */
export function createLanePool(lanes: Lane[], db: Db, lock: LaneLock | undefined): LanePool {
  const busy = lanes.map(() => false);
  const waiting: ((index: number) => void)[] = [];
  const release = (index: number) => {
    const next = waiting.shift();
    if (next) next(index);
    else busy[index] = false;
  };
  /** Every lane free here (all marked busy), or the next one released when none is. */
  const freeHere = (): Promise<number[]> => {
    const free = lanes.flatMap((_, index) => (busy[index] ? [] : [index]));
    for (const index of free) busy[index] = true;
    if (free.length > 0) return Promise.resolve(free);
    return new Promise((resolve) => waiting.push((index) => resolve([index])));
  };
  const laneAt = (index: number) => lanes[index] as Lane;
  const lockName = (index: number) => `gas-wallet:${lock?.chainId}:${laneAt(index).address.toLowerCase()}`;
  return {
    lanes,
    byAddress: (address) => lanes.find((lane) => lane.address.toLowerCase() === address.toLowerCase()),
    async take(work) {
      const candidates = await freeHere();
      if (!lock) {
        const [chosen = 0, ...rest] = candidates;
        rest.forEach(release);
        try {
          return await work(laneAt(chosen), db);
        } finally {
          release(chosen);
        }
      }
      let chosen = -1;
      try {
        const names = candidates.map(lockName);
        return await withFirstFreeLock(
          db,
          names,
          (held, session) => {
            chosen = candidates[held] ?? 0;
            for (const index of candidates) if (index !== chosen) release(index);
            return work(laneAt(chosen), session);
          },
          lock.logger,
        );
      } finally {
        if (chosen < 0) candidates.forEach(release);
        else release(chosen);
      }
    },
  };
}

/** What a lane records before each broadcast: the row that lets any process follow it. */
export function broadcastRow(network: string, signed: SignedSend, at: Date): store.BroadcastRow {
  const { transaction } = signed;
  return {
    tx_hash: signed.hash.toLowerCase(),
    first_hash: (signed.firstHash ?? signed.hash).toLowerCase(),
    network,
    lane: signed.from.toLowerCase(),
    nonce: String(signed.nonce),
    to_address: String(transaction.to).toLowerCase(),
    data: transaction.data ?? '0x',
    gas: String(transaction.gas ?? 0n),
    max_fee_per_gas: String(transaction.maxFeePerGas ?? 0n),
    max_priority_fee_per_gas: String(transaction.maxPriorityFeePerGas ?? 0n),
    created_at: at,
  };
}

function signedFrom(row: store.BroadcastRow, chainId: number): SignedSend {
  return {
    hash: row.tx_hash as Hash,
    firstHash: row.first_hash as Hash,
    from: row.lane as Address,
    nonce: Number(row.nonce),
    transaction: {
      type: 'eip1559',
      chainId,
      to: row.to_address as Address,
      data: row.data as Hex,
      gas: BigInt(row.gas),
      maxFeePerGas: BigInt(row.max_fee_per_gas),
      maxPriorityFeePerGas: BigInt(row.max_priority_fee_per_gas),
    },
  };
}

export type Follower = {
  db: Db;
  /** The network's CAIP-2 id (the broadcasts' key) and its chain id. */
  network: string;
  chainId: number;
  publicClient: PublicClient<Transport, ViemChain>;
  pool: LanePool;
  /** How long the newest transaction of a settlement may stay unmined before it is replaced. */
  replaceAfterMs: number;
  logger?: Logger | undefined;
};

/**
 * One look at a settlement first broadcast as `firstHash`: the receipt of whichever of its
 * transactions mined (`found`), `absent` when none has and the lane's nonce went to another
 * transaction (none of them can mine any more), else `unknown`. A newest transaction unmined
 * for `replaceAfterMs` is replaced at its nonce with raised fees first.
 *
 * The first transaction is asked about before the recorded ones are read: at most one of a
 * settlement's transactions can mine, so when the first did, it is the one, and a settlement that
 * was never replaced (nearly all) costs no read of the database.
 */
export async function lookOnce(
  follower: Follower,
  firstHash: string,
): Promise<ChainRead<TransactionReceipt>> {
  const { network, publicClient } = follower;
  const receiptOf = (hash: string) =>
    readChain(network, 'getTransactionReceipt', () =>
      publicClient.getTransactionReceipt({ hash: hash as Hash }),
    );
  const first = await receiptOf(firstHash);
  if (first.kind === 'found') return first;
  const rows = await store.broadcastsOf(follower.db, firstHash);
  for (const row of rows) {
    if (row.tx_hash === firstHash.toLowerCase()) continue;
    const read = await receiptOf(row.tx_hash);
    if (read.kind === 'found') return read;
  }
  const newest = rows.at(-1);
  if (!newest) return { kind: 'unknown', reason: 'no receipt yet' };
  const mined = await readChain(network, 'getTransactionCount', () =>
    publicClient.getTransactionCount({ address: newest.lane as Address, blockTag: 'latest' }),
  );
  // The nonce is taken and none of ours holds it (asked above, before the count): definitely not.
  if (mined.kind === 'found' && mined.value > Number(newest.nonce)) return recheck(follower, rows);
  if (Date.now() - newest.created_at.getTime() >= follower.replaceAfterMs)
    await replaceStuck(follower, newest);
  return { kind: 'unknown', reason: 'no receipt yet' };
}

/** After the nonce was seen taken: one of ours may have mined between the two reads. */
async function recheck(
  follower: Follower,
  rows: store.BroadcastRow[],
): Promise<ChainRead<TransactionReceipt>> {
  for (const row of rows) {
    const read = await readChain(follower.network, 'getTransactionReceipt', () =>
      follower.publicClient.getTransactionReceipt({ hash: row.tx_hash as Hash }),
    );
    if (read.kind !== 'absent') return read;
  }
  return { kind: 'absent' };
}

/** Re-signs the newest transaction at its nonce with raised fees (never a new nonce). */
async function replaceStuck(follower: Follower, newest: store.BroadcastRow): Promise<void> {
  const lane = follower.pool.byAddress(newest.lane);
  if (!lane) return;
  const fees = await readChain(follower.network, 'estimateFeesPerGas', () =>
    follower.publicClient.estimateFeesPerGas(),
  );
  const current =
    fees.kind === 'found' && fees.value.maxFeePerGas !== undefined
      ? {
          chainId: follower.chainId,
          gas: BigInt(newest.gas),
          maxFeePerGas: fees.value.maxFeePerGas,
          maxPriorityFeePerGas: fees.value.maxPriorityFeePerGas ?? 0n,
        }
      : undefined;
  try {
    const replacement = await lane.sender.replace(signedFrom(newest, follower.chainId), current);
    follower.logger?.warn(
      { stuck: newest.tx_hash, replacement: replacement.hash, nonce: newest.nonce },
      'a settlement transaction stayed unmined; replaced at its nonce with higher fees',
    );
  } catch (error) {
    // Refused: most often the nonce was mined meanwhile (the next look finds the receipt).
    follower.logger?.info({ err: error, stuck: newest.tx_hash }, 'a replacement was not taken');
  }
}

/** How often a settlement's transactions are looked at while a payer waits. */
const LOOK_EVERY_MS = 100;

/**
 * Waits for the receipt of whichever transaction of a settlement mines, replacing a stuck one
 * on the way; throws once `timeoutMs` passed without one (the scheme then answers
 * `settlement_pending`, and the follower or a retry finishes the settlement).
 */
export async function waitForSettlement(
  follower: Follower,
  firstHash: string,
  timeoutMs: number,
): Promise<TransactionReceipt> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const look = await lookOnce(follower, firstHash);
    if (look.kind === 'found') return look.value;
    if (look.kind === 'absent') throw new Error(`No transaction of ${firstHash} can mine any more.`);
    if (Date.now() >= deadline) throw new Error(`No receipt for ${firstHash} within ${timeoutMs} ms.`);
    await new Promise((resolve) => setTimeout(resolve, LOOK_EVERY_MS));
  }
}
