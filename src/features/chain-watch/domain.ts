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
export type Allocation = { requestId: string; amount: AmountE8 };

/**
 * A direct transfer fills the address's open requests oldest first; what is left after the last
 * one is income of the account with no request.
 */
export function allocate(
  amount: AmountE8,
  requests: readonly OpenRequest[],
): { allocations: Allocation[]; remainder: AmountE8 } {
  let left = amount as bigint;
  const allocations: Allocation[] = [];
  for (const request of requests) {
    if (left === 0n) break;
    if (request.open <= 0n) continue;
    const take = request.open < left ? request.open : left;
    allocations.push({ requestId: request.id, amount: asAmount(take) });
    left -= take;
  }
  return { allocations, remainder: asAmount(left) };
}
