import { Counter } from 'prom-client';
import {
  BaseError,
  BlockNotFoundError,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
} from 'viem';

// Every read from a chain node ends one of three ways: the node answered with the thing
// (`found`), the node definitely does not have it (`absent`), or we could not tell (`unknown`).
// Only `found` and `absent` may change money or state; `unknown` (a timeout, a cut connection,
// HTTP 429 or 5xx, a JSON-RPC error, a node behind the block in question) is skipped and asked
// again on the next round.

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
 * Runs one read against a node and sorts its end into the three outcomes. `null` or `undefined`
 * from the node means absent; viem's not-found errors mean absent; every other error is unknown
 * and is counted under `network` and `call`.
 */
export async function readChain<T>(
  network: string,
  call: string,
  read: () => Promise<T | null | undefined>,
): Promise<ChainRead<T>> {
  try {
    const value = await read();
    return value === null || value === undefined ? absent() : found(value);
  } catch (error) {
    if (isNotFound(error)) return absent();
    chainUnknownTotal.inc({ network, call });
    return unknown(describeChainError(error));
  }
}

/** Marks a read as unknown without asking (for instance: the node's head is below the block). */
export function unknownWithout<T>(network: string, call: string, reason: string): ChainRead<T> {
  chainUnknownTotal.inc({ network, call });
  return unknown(reason);
}
