import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import {
  BaseError,
  BlockNotFoundError,
  type PublicClient,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type Transport,
  type Chain as ViemChain,
} from 'viem';
import { isCalledInsideTransaction } from '../db/transaction-guard.ts';

// Every read from a chain node ends one of three ways: the node answered with the thing
// (`found`), the node definitely does not have it (`absent`), or we could not tell (`unknown`).
// Only `found` and `absent` may change money or state; `unknown` (a timeout, a cut connection,
// HTTP 429 or 5xx, a JSON-RPC error, a node behind the block in question) is skipped and asked
// again on the next round. A node whose head lags the best head of its network by more than the
// network's confirmations is not asked at all where an absence would be believed.

export type ChainRead<T> =
  | { kind: 'found'; value: T }
  | { kind: 'absent' }
  | { kind: 'unknown'; reason: string };

export const found = <T>(value: T): ChainRead<T> => ({ kind: 'found', value });
export const absent = <T>(): ChainRead<T> => ({ kind: 'absent' });
export const unknown = <T>(reason: string): ChainRead<T> => ({ kind: 'unknown', reason });

/**
 * Counts the reads that ended `unknown`, by network and call. It registers in no registry of its
 * own: the app's metrics registry adds it (one counter object may sit in several registries).
 */
export const chainUnknownTotal = new Counter({
  name: 'tollbook_chain_unknown_total',
  help: 'Chain node calls that ended unknown (timeout, rate limit, node error, lagging node): nothing changed, retried later.',
  labelNames: ['network', 'call'] as const,
  registers: [],
});

/** Errors that say the node does not hold the thing asked for (as opposed to: could not answer). */
function isNotFound(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  return Boolean(
    error.walk(
      (cause) =>
        cause instanceof TransactionReceiptNotFoundError ||
        cause instanceof TransactionNotFoundError ||
        cause instanceof BlockNotFoundError,
    ),
  );
}

/** A short reason for an unknown outcome, for logs (never shown to a payer). */
export function describeChainError(error: unknown): string {
  if (error instanceof BaseError) return error.shortMessage;
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * Sorts one read's end into the three outcomes, counting nothing. `null` or `undefined` from the
 * node means absent; viem's not-found errors mean absent; every other error is unknown.
 */
export async function classifyRead<T>(read: () => Promise<T | null | undefined>): Promise<ChainRead<T>> {
  try {
    const value = await read();
    return value === null || value === undefined ? absent() : found(value);
  } catch (error) {
    // A read made inside a database transaction is a bug in the caller, not a node's doubt.
    if (isCalledInsideTransaction(error)) throw error;
    if (isNotFound(error)) return absent();
    return unknown(describeChainError(error));
  }
}

/** Runs one read against a node: classifyRead, with an unknown end counted under network and call. */
export async function readChain<T>(
  network: string,
  call: string,
  read: () => Promise<T | null | undefined>,
): Promise<ChainRead<T>> {
  const outcome = await classifyRead(read);
  if (outcome.kind === 'unknown') chainUnknownTotal.inc({ network, call });
  return outcome;
}

/** Marks a read as unknown without asking (for instance: the node's head is below the block). */
export function unknownWithout<T>(network: string, call: string, reason: string): ChainRead<T> {
  chainUnknownTotal.inc({ network, call });
  return unknown(reason);
}

/**
 * The chain reads of one round of a worker. Each unknown end is counted as it happens; the
 * round's unknowns are logged together, once, at warn, when the round ends.
 */
export class ChainRound {
  readonly #name: string;
  readonly #logger: Logger | undefined;
  readonly #unknowns = new Map<string, { count: number; reason: string }>();

  constructor(name: string, logger: Logger | undefined) {
    this.#name = name;
    this.#logger = logger;
  }

  /** Reads once; an unknown end is counted and remembered for the round's log line. */
  async read<T>(network: string, call: string, read: () => Promise<T | null | undefined>) {
    const outcome = await classifyRead(read);
    if (outcome.kind === 'unknown') return this.unknown<T>(network, call, outcome.reason);
    return outcome;
  }

  /** An unknown end decided without (or after) asking. */
  unknown<T>(network: string, call: string, reason: string): ChainRead<T> {
    chainUnknownTotal.inc({ network, call });
    const key = `${network} ${call}`;
    const seen = this.#unknowns.get(key);
    this.#unknowns.set(key, { count: (seen?.count ?? 0) + 1, reason: seen?.reason ?? reason });
    return unknown(reason);
  }

  /** How many reads of this round ended unknown. */
  get unknownCount(): number {
    let total = 0;
    for (const { count } of this.#unknowns.values()) total += count;
    return total;
  }

  /** Logs the round's unknown reads in one line at warn (nothing when there were none). */
  end(): void {
    if (this.#unknowns.size === 0) return;
    const calls = Object.fromEntries(
      [...this.#unknowns].map(([key, { count, reason }]) => [key, { count, firstReason: reason }]),
    );
    this.#logger?.warn(
      { round: this.#name, unknown: calls },
      'chain reads ended unknown this round: nothing was changed for them, they are asked again next round',
    );
    this.#unknowns.clear();
  }
}

/** One node of a network, asked on its own (its label never holds the URL, which may carry a key). */
export type ChainNode = { label: string; client: PublicClient<Transport, ViemChain> };

/** One round's view of a network's nodes: the head each reported, and the best of them. */
export type NetworkView = {
  network: string;
  /** Nodes that answered, in configured order, each with its head. */
  heads: { node: ChainNode; head: bigint }[];
  best: bigint;
  /** A node further than this below `best` is lagging: never asked where absence is believed. */
  lagMax: bigint;
};

/** Asks every node of a network for its head; unknown when none answers. */
export async function viewNetwork(
  round: ChainRound,
  network: string,
  nodes: readonly ChainNode[],
  lagMax: bigint,
): Promise<ChainRead<NetworkView>> {
  const answers = await Promise.all(
    nodes.map(async (node) => ({
      node,
      head: await classifyRead(() => node.client.getBlockNumber({ cacheTime: 0 })),
    })),
  );
  const heads: NetworkView['heads'] = [];
  let reason = 'no node configured';
  for (const answer of answers) {
    if (answer.head.kind === 'found') heads.push({ node: answer.node, head: answer.head.value });
    else if (answer.head.kind === 'unknown') reason = `${answer.node.label}: ${answer.head.reason}`;
  }
  if (heads.length === 0) return round.unknown(network, 'eth_blockNumber', reason);
  let best = 0n;
  for (const { head } of heads) if (head > best) best = head;
  return found({ network, heads, best, lagMax });
}

/** What a current node answered, with that node's head when it answered. */
export type ReadAtHead<T> = { outcome: ChainRead<T>; head: bigint };

/**
 * Asks the view's current nodes (no further than lagMax below the best head) whose head is at or
 * past `atBlock`, in order, until one answers found or absent. Unknown when none of them can:
 * a lagging node, or one below the block, is never believed when it says a thing is absent.
 */
export async function readAtHead<T>(
  round: ChainRound,
  view: NetworkView,
  call: string,
  atBlock: bigint,
  read: (client: ChainNode['client']) => Promise<T | null | undefined>,
): Promise<ReadAtHead<T>> {
  let reason = `no node within ${view.lagMax} blocks of the best head ${view.best} is at block ${atBlock}`;
  for (const { node, head } of view.heads) {
    if (head + view.lagMax < view.best || head < atBlock) continue;
    const outcome = await classifyRead(() => read(node.client));
    if (outcome.kind !== 'unknown') return { outcome, head };
    reason = `${node.label}: ${outcome.reason}`;
  }
  return { outcome: round.unknown(view.network, call, reason), head: view.best };
}

/**
 * What one round's evidence that a booked movement left the chain does to it. Evidence is a
 * current node, with its head at or past the movement's block, answering that the transaction no
 * longer carries it (its block replaced, no receipt with the transfer). The first sighting only
 * marks the movement with that node's head; a sighting at a head at least one block further
 * undoes it. A round that sees the movement again clears the mark.
 */
export function onEvidenceOfRemoval(
  suspectSinceBlock: bigint | null,
  head: bigint,
): 'mark' | 'wait' | 'undo' {
  if (suspectSinceBlock === null) return 'mark';
  return head > suspectSinceBlock ? 'undo' : 'wait';
}
