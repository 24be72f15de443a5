import { type AmountE8, asAmount, SCALE } from '../../core/money.ts';

// The only place where an amount (10⁻⁸ units) becomes a token's base units and back. A token
// with fewer decimals than eight cannot carry every amount: such amounts are refused, never
// rounded, so what goes on chain is exactly what was booked.

/** Decimals an ERC-20 may report; anything above 77 would not fit a uint256 anyway. */
const DECIMALS_MAX = 77;

export type BaseUnitsResult = { ok: true; value: bigint } | { ok: false; problem: 'inexact' | 'negative' };

function checkDecimals(decimals: number): void {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > DECIMALS_MAX) {
    throw new RangeError(
      `A token's decimals must be a whole number from 0 to ${DECIMALS_MAX}; got ${decimals}.`,
    );
  }
}

/** `amountE8` in the token's base units; refused when the token cannot carry it exactly. */
export function toBaseUnits(amountE8: AmountE8, decimals: number): BaseUnitsResult {
  checkDecimals(decimals);
  if (amountE8 < 0n) return { ok: false, problem: 'negative' };
  if (decimals >= SCALE) return { ok: true, value: amountE8 * 10n ** BigInt(decimals - SCALE) };
  const divisor = 10n ** BigInt(SCALE - decimals);
  if (amountE8 % divisor !== 0n) return { ok: false, problem: 'inexact' };
  return { ok: true, value: amountE8 / divisor };
}

/** Like toBaseUnits, for callers that already checked the amount: an inexact one is a bug. */
export function toBaseUnitsExact(amountE8: AmountE8, decimals: number): bigint {
  const result = toBaseUnits(amountE8, decimals);
  if (!result.ok) {
    throw new RangeError(
      `${amountE8} (10⁻⁸ units) is not a whole number of base units at ${decimals} decimals.`,
    );
  }
  return result.value;
}

export type AmountResult = { ok: true; value: AmountE8 } | { ok: false; problem: 'inexact' | 'negative' };

/** Base units back into an amount; a token finer than eight decimals may hold what we cannot book. */
export function fromBaseUnits(baseUnits: bigint, decimals: number): AmountResult {
  checkDecimals(decimals);
  if (baseUnits < 0n) return { ok: false, problem: 'negative' };
  if (decimals <= SCALE) return { ok: true, value: asAmount(baseUnits * 10n ** BigInt(SCALE - decimals)) };
  const divisor = 10n ** BigInt(decimals - SCALE);
  if (baseUnits % divisor !== 0n) return { ok: false, problem: 'inexact' };
  return { ok: true, value: asAmount(baseUnits / divisor) };
}
