import { type AmountE8, asAmount, SCALE } from '../../core/money.ts';

// Which amounts can go by card through Stripe, decided without I/O. Stripe takes an amount as an
// integer of the currency's minor unit (ISO 4217); an amount that does not fit that unit exactly
// cannot go by card, because rounding it would take or give money nobody asked for.

type CardCurrency = { exponent: number; minimumMinor: bigint };

/**
 * The currencies the card rail offers: ones Stripe charges in, with the ISO 4217 minor unit
 * Stripe uses for them and Stripe's smallest charge (in minor units). Currencies Stripe treats
 * unlike ISO (HUF, TWD, ISK, UGX) or whose three-decimal amounts must end in zero are left out.
 */
export const CARD_CURRENCIES: Readonly<Record<string, CardCurrency>> = {
  USD: { exponent: 2, minimumMinor: 50n },
  EUR: { exponent: 2, minimumMinor: 50n },
  GBP: { exponent: 2, minimumMinor: 30n },
  CHF: { exponent: 2, minimumMinor: 50n },
  CAD: { exponent: 2, minimumMinor: 50n },
  AUD: { exponent: 2, minimumMinor: 50n },
  NZD: { exponent: 2, minimumMinor: 50n },
  SGD: { exponent: 2, minimumMinor: 50n },
  HKD: { exponent: 2, minimumMinor: 400n },
  SEK: { exponent: 2, minimumMinor: 300n },
  NOK: { exponent: 2, minimumMinor: 300n },
  DKK: { exponent: 2, minimumMinor: 250n },
  PLN: { exponent: 2, minimumMinor: 200n },
  CZK: { exponent: 2, minimumMinor: 1500n },
  RON: { exponent: 2, minimumMinor: 200n },
  BGN: { exponent: 2, minimumMinor: 100n },
  MXN: { exponent: 2, minimumMinor: 1000n },
  BRL: { exponent: 2, minimumMinor: 50n },
  INR: { exponent: 2, minimumMinor: 50n },
  AED: { exponent: 2, minimumMinor: 200n },
  MYR: { exponent: 2, minimumMinor: 200n },
  THB: { exponent: 2, minimumMinor: 1000n },
  JPY: { exponent: 0, minimumMinor: 50n },
};

/** Stripe's largest amount: eight digits of the minor unit (999,999.99 USD). */
export const STRIPE_AMOUNT_MAX_MINOR = 99_999_999n;

export type CardAmount =
  | { ok: true; currency: string; minor: bigint }
  | { ok: false; reason: 'currency' | 'precision' | 'too_small' | 'too_large'; detail: string };

/** The amount as Stripe takes it (lower-case currency, minor units), or why it cannot go by card. */
export function cardAmount(currency: string, amount: AmountE8): CardAmount {
  const code = currency.toUpperCase();
  const rule = CARD_CURRENCIES[code];
  if (!rule) return { ok: false, reason: 'currency', detail: `Cards are not taken in ${code}.` };
  const step = 10n ** BigInt(SCALE - rule.exponent);
  if (amount % step !== 0n) {
    return {
      ok: false,
      reason: 'precision',
      detail: `${code} has ${rule.exponent} decimal places; this amount has more, so it cannot go by card.`,
    };
  }
  const minor = amount / step;
  if (minor < rule.minimumMinor)
    return { ok: false, reason: 'too_small', detail: `A card payment in ${code} must be larger.` };
  if (minor > STRIPE_AMOUNT_MAX_MINOR)
    return { ok: false, reason: 'too_large', detail: `A card payment in ${code} cannot be this large.` };
  return { ok: true, currency: code.toLowerCase(), minor };
}

/** An amount Stripe reports (minor units of a card currency) in 10⁻⁸ units; undefined for a currency we never asked for. */
export function amountFromMinor(currency: string, minor: bigint): AmountE8 | undefined {
  const rule = CARD_CURRENCIES[currency.toUpperCase()];
  if (!rule || minor < 0n) return undefined;
  return asAmount(minor * 10n ** BigInt(SCALE - rule.exponent));
}

/**
 * Stripe sends integers of at most eight digits for amounts; anything else in a signed event is
 * not an amount this rail understands.
 */
export function minorOf(value: unknown): bigint | undefined {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) return undefined;
  return BigInt(value);
}

/** What a verified Stripe event means to the card rail. */
export type EventMeaning = 'session_paid' | 'session_pending' | 'refund' | 'ignored';

export function meaningOf(type: string, paymentStatus: unknown): EventMeaning {
  if (type === 'checkout.session.completed')
    return paymentStatus === 'paid' ? 'session_paid' : 'session_pending';
  if (type === 'checkout.session.async_payment_succeeded') return 'session_paid';
  if (type === 'charge.refunded' || type === 'charge.refund.updated') return 'refund';
  if (type === 'refund.created' || type === 'refund.updated') return 'refund';
  return 'ignored';
}
