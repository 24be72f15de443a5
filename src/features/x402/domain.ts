// x402 rules with no I/O: what a quote says, how token base units and 10⁻⁸ amounts convert,
// and what shape a payment payload must have before the facilitator looks at it.

/** The x402 protocol version Tollbook speaks (v2: PAYMENT-REQUIRED / PAYMENT-SIGNATURE headers). */
export const X402_VERSION = 2;
/** A quote never gives the payer less than a minute to get the transfer on chain. */
export const MIN_TIMEOUT_SECONDS = 60;
/** ...nor more than five minutes, even for a request that lives a day. */
export const MAX_TIMEOUT_SECONDS = 300;
/** How long a claimed settlement belongs to the process that claimed it before another may retry it. */
export const CLAIM_LEASE_MS = 120_000;
/** How long a duplicate of a payment being settled waits for the first one's outcome. */
export const DUPLICATE_WAIT_MS = 20_000;

export type Requirements = {
  scheme: 'exact';
  network: string;
  asset: string;
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: { name: string; version: string };
};

export type TokenFacts = { address: string; name: string; version: string; decimals: number };

/** Between a minute and five, and never past the request's own deadline when that allows a minute. */
export function timeoutFor(remainingSeconds: number): number {
  return Math.max(MIN_TIMEOUT_SECONDS, Math.min(MAX_TIMEOUT_SECONDS, Math.floor(remainingSeconds)));
}

export function requirementsFor(input: {
  caip2: string;
  token: TokenFacts;
  payTo: string;
  baseUnits: bigint;
  remainingSeconds: number;
}): Requirements {
  return {
    scheme: 'exact',
    network: input.caip2,
    asset: input.token.address,
    amount: input.baseUnits.toString(),
    payTo: input.payTo,
    maxTimeoutSeconds: timeoutFor(input.remainingSeconds),
    extra: { name: input.token.name, version: input.token.version },
  };
}

/** An EIP-3009 authorization as the exact scheme carries it. */
export type Authorization = {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
};

export type PayloadFacts = {
  network: string;
  scheme: string;
  authorization: Authorization;
  signature: string;
};

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const NONCE = /^0x[0-9a-fA-F]{64}$/;
const UINT = /^\d{1,78}$/;
const HEX = /^0x[0-9a-fA-F]*$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The parts of a v2 exact-scheme EIP-3009 payload Tollbook keys its records on, or the reason it
 * is not one. The facilitator checks the signature, amounts and times; this only refuses what
 * it could not even read.
 */
export function readPayload(
  payload: unknown,
): { ok: true; facts: PayloadFacts } | { ok: false; reason: string } {
  if (!isObject(payload)) return { ok: false, reason: 'The payment payload is not a JSON object.' };
  if (payload.x402Version !== X402_VERSION)
    return { ok: false, reason: `Only x402 version ${X402_VERSION} payloads are accepted.` };
  const accepted = payload.accepted;
  if (!isObject(accepted) || typeof accepted.network !== 'string' || typeof accepted.scheme !== 'string')
    return { ok: false, reason: 'The payload does not say which requirement it accepted.' };
  const inner = payload.payload;
  if (!isObject(inner) || !isObject(inner.authorization) || typeof inner.signature !== 'string')
    return { ok: false, reason: 'Only EIP-3009 authorizations (the exact scheme on EVM) are accepted.' };
  const auth = inner.authorization;
  const fields = ['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce'] as const;
  if (!fields.every((field) => typeof auth[field] === 'string'))
    return { ok: false, reason: 'The authorization misses a field or has a field that is not a string.' };
  const authorization = Object.fromEntries(fields.map((field) => [field, auth[field]])) as Authorization;
  const wellFormed =
    ADDRESS.test(authorization.from) &&
    ADDRESS.test(authorization.to) &&
    UINT.test(authorization.value) &&
    UINT.test(authorization.validAfter) &&
    UINT.test(authorization.validBefore) &&
    NONCE.test(authorization.nonce) &&
    HEX.test(inner.signature) &&
    inner.signature.length <= 20_000;
  if (!wellFormed)
    return { ok: false, reason: 'The authorization has a malformed address, number, nonce or signature.' };
  return {
    ok: true,
    facts: { network: accepted.network, scheme: accepted.scheme, authorization, signature: inner.signature },
  };
}

/** What a payer sees for a refusal reason the x402 packages return (their codes are kept as they are). */
const REASON_TEXT: Record<string, string> = {
  invalid_exact_evm_signature:
    'The signature does not match the authorization for this token (check the EIP-712 name and version).',
  invalid_exact_evm_recipient_mismatch: 'The authorization pays another address than the quote.',
  invalid_exact_evm_payload_authorization_value_mismatch:
    'The authorization is not for the exact amount quoted.',
  invalid_exact_evm_payload_authorization_valid_before:
    'The authorization has expired (or expires within seconds).',
  invalid_exact_evm_payload_authorization_valid_after: 'The authorization is not valid yet.',
  invalid_exact_evm_insufficient_balance: 'The payer does not hold enough of the token.',
  invalid_exact_evm_nonce_already_used: 'This authorization was already used on chain.',
  invalid_exact_evm_network_mismatch: 'The payload is for another network than the quote.',
  invalid_exact_evm_token_name_mismatch: 'The authorization was signed for another EIP-712 token name.',
  invalid_exact_evm_token_version_mismatch: 'The authorization was signed for another EIP-712 token version.',
};

export function describeReason(reason: string | undefined, message?: string): string {
  if (reason && REASON_TEXT[reason]) return REASON_TEXT[reason];
  if (reason && message) return `${reason}: ${(message.split('\n')[0] ?? '').slice(0, 300)}`;
  return reason ?? 'The payment was refused.';
}

/** The reason a payment under an id another payment holds is refused (the extension's 409). */
export const PAYMENT_ID_CONFLICT = 'payment_identifier_conflict';

/**
 * Whether a payment under an id is the same payment as the claim that holds the id: the same
 * payer paying the same amount of the same token on the same network, for the same request (a
 * page) or resource (the facilitator). A retry may carry a fresh signature (a client signs anew
 * for every 402): the id, not the nonce, says it is the same payment.
 */
export function samePayment(
  held: {
    network: string;
    asset: string;
    payer: string;
    pay_to: string;
    amount_base: string;
    payment_request_id: string | null;
    resource_url: string | null;
    via: string;
  },
  wanted: typeof held,
): boolean {
  return (
    held.via === wanted.via &&
    held.network === wanted.network &&
    held.asset === wanted.asset &&
    held.payer === wanted.payer &&
    held.pay_to === wanted.pay_to &&
    BigInt(String(held.amount_base)) === BigInt(String(wanted.amount_base)) &&
    (held.via === 'page'
      ? held.payment_request_id === wanted.payment_request_id
      : held.resource_url === wanted.resource_url)
  );
}

/**
 * The client_ref of the credit an EVM address keys: `evm:` and the address in lowercase, one
 * spelling whatever case (checksummed or not) the address arrived in.
 */
export function creditRefOf(address: string): string {
  return `evm:${address.toLowerCase()}`;
}

/** Where a seller's quote asks that its payment top up the payer's credit (in `extra`). */
export const CREDIT_TERMS_FIELD = 'tollbookCredit';

/** A quote's credit terms: the payment tops up the payer's credit, and this call costs `price` from it. */
export type CreditTerms = { price: string };

/**
 * The credit terms a requirement's `extra` carries: none, the terms, or why they cannot be used.
 * The price is a decimal in USD; its grammar and size are checked where amounts are parsed.
 */
export function readCreditTerms(
  extra: Record<string, unknown> | undefined,
): { ok: true; terms: CreditTerms | null } | { ok: false; reason: string } {
  const terms = extra?.[CREDIT_TERMS_FIELD];
  if (terms === undefined) return { ok: true, terms: null };
  if (typeof terms !== 'object' || terms === null || Array.isArray(terms))
    return { ok: false, reason: `extra.${CREDIT_TERMS_FIELD} must be an object { price }.` };
  const price = (terms as { price?: unknown }).price;
  if (typeof price !== 'string')
    return { ok: false, reason: `extra.${CREDIT_TERMS_FIELD}.price must be a decimal string.` };
  return { ok: true, terms: { price } };
}
