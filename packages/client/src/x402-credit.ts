import { createTollbook, type Tollbook, TollbookError } from './index.ts';

// A seller's x402 resource paid from a prepaid Tollbook credit, for a stock x402 server
// (@x402/core's x402HTTPResourceServer under @x402/express, @x402/hono, …) whose 402 declares the
// sign-in-with-x extension. The payer's first call pays the route's x402 price on chain, through
// Tollbook as facilitator, and that payment tops up the credit its address keys in the seller's
// book (and pays this call's price from it); each later call signs in and is charged to the
// credit, with no new payment, until the credit runs short and the 402 asks for a payment again.
// The types here are structural, so this package needs no x402 dependency.

export type X402CreditOptions = {
  /** The Tollbook server and an integration key with the payments scope. */
  baseUrl: string;
  key: string;
  /** The account the calls are booked to (the USDC wallet the route's payTo names). */
  accountId: string;
  /** The price of one call charged to the credit: a decimal string in USD, such as "0.01". */
  price: string;
  /** The public origin the SIWX extension was configured with, e.g. https://api.example.com. */
  origin: string;
  /** A client to use instead of one made from baseUrl and key (tests, shared retries). */
  client?: Tollbook;
};

/** What an x402 server's onProtectedRequest hook is given (the fields used here). */
export type ProtectedRequestContext = {
  adapter: { getHeader(name: string): string | undefined };
  path: string;
};

export type ProtectedRequestDecision = { grantAccess: true } | { abort: true; reason: string } | undefined;

const SIGN_IN_HEADER = 'sign-in-with-x';

/**
 * The three pieces a seller wires into its x402 server:
 * - `extra`, spread into the route's `price.extra`: the payment tops up the payer's credit;
 * - `storage`, for the extension's `createSIWxResourceServerExtension`: a past payment never
 *   grants access by itself (the credit does), so calls are never served for free;
 * - `onProtectedRequest`, registered on the x402HTTPResourceServer (it runs before the
 *   extension's own hook): a signed-in call charged to the credit is served with no payment.
 */
export function x402Credit(options: X402CreditOptions) {
  const tollbook = options.client ?? createTollbook({ baseUrl: options.baseUrl, key: options.key });
  const origin = new URL(options.origin).origin;
  return {
    extra: { tollbookCredit: { price: options.price } },
    storage: {
      hasPaid: () => false,
      recordPayment: () => undefined,
    },
    onProtectedRequest: (context: ProtectedRequestContext) =>
      chargeSignedInCall(tollbook, options, `${origin}${context.path}`, context),
  };
}

/**
 * Charges a signed-in call: served when the credit carries it; left to the x402 payment when
 * the credit is short or the sign-in is not acceptable; refused (403) when the sign-in was used
 * before, and when Tollbook could not answer (the charge may have happened, so asking for a
 * payment as well could make the payer pay twice).
 */
async function chargeSignedInCall(
  tollbook: Tollbook,
  options: X402CreditOptions,
  resource: string,
  context: ProtectedRequestContext,
): Promise<ProtectedRequestDecision> {
  const signIn =
    context.adapter.getHeader(SIGN_IN_HEADER) ?? context.adapter.getHeader(SIGN_IN_HEADER.toUpperCase());
  if (signIn === undefined || signIn === '') return undefined;
  try {
    const { data } = await tollbook.POST('/integration/x402/credit-calls', {
      body: { sign_in: signIn, resource, account_id: options.accountId, amount: options.price },
    });
    return data?.paid ? { grantAccess: true } : undefined;
  } catch (error) {
    if (error instanceof TollbookError && error.code === 'invalid_request') return undefined;
    if (error instanceof TollbookError && error.code === 'conflict')
      return { abort: true, reason: 'sign_in_used' };
    return { abort: true, reason: 'billing_unavailable' };
  }
}
