import { type AmountE8, asAmount, expandExponent, UNIT } from '../../core/money.ts';

/** A top-up is the asked size, else the larger of the price and the one-dollar on-chain floor. */
export function topUpAmount(price: AmountE8, asked: AmountE8 | null): AmountE8 {
  if (asked !== null) return asked;
  return price > UNIT ? price : asAmount(UNIT);
}

/** The price as the caller spelled it: "1.50" stays "1.50"; the JSON number 1.5 reads "1.5". */
export function spelledAsSent(value: number | string): string {
  return typeof value === 'string' ? value : expandExponent(String(value));
}
