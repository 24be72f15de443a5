import { type AmountE8, asAmount } from '../../core/money.ts';

// The account watch's rules, with no I/O.

/** At most this many blocks per getLogs call (public RPCs refuse wide ranges). */
export const MAX_SPAN = 2_000n;
/** A cursor created today starts this far back, so a server started late still sees recent payments. */
export const INITIAL_LOOKBACK = 1_000n;
/** Booked transfers this close to the head are re-checked against the canonical chain. */
export const REORG_WINDOW = 256n;

/** The blocks to read next, or undefined when the cursor has caught up with the safe head. */
export function nextRange(
  next: bigint,
  safeHead: bigint,
  span = MAX_SPAN,
): { from: bigint; to: bigint } | undefined {
  if (next > safeHead) return undefined;
  const to = next + span - 1n < safeHead ? next + span - 1n : safeHead;
  return { from: next, to };
}

export type OpenRequest = { id: string; open: AmountE8 };
export type MatchRule = 'exact' | 'oldest_first';
export type Allocation = { requestId: string; amount: AmountE8; matchedBy: MatchRule };

/**
 * A direct transfer first looks for a request that asks for exactly its amount (each open request
 * on an address asks for an amount of its own; among equals, after a reorganisation re-opened
 * one, the oldest). Only a transfer that matches none (a partial payment, an over-payment, a
 * typo) fills the open requests oldest first; what is left after the last one is income of the
 * account with no request. Requests are given oldest first.
 */
export function allocate(
  amount: AmountE8,
  requests: readonly OpenRequest[],
): { allocations: Allocation[]; remainder: AmountE8 } {
  const exact = requests.find((request) => request.open === amount);
  if (exact)
    return { allocations: [{ requestId: exact.id, amount, matchedBy: 'exact' }], remainder: asAmount(0n) };
  let left = amount as bigint;
  const allocations: Allocation[] = [];
  for (const request of requests) {
    if (left === 0n) break;
    if (request.open <= 0n) continue;
    const take = request.open < left ? request.open : left;
    allocations.push({ requestId: request.id, amount: asAmount(take), matchedBy: 'oldest_first' });
    left -= take;
  }
  return { allocations, remainder: asAmount(left) };
}
