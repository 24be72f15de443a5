import type { PaymentPayload } from '@x402/core/types';
import {
  declarePaymentIdentifierExtension,
  extractAndValidatePaymentIdentifier,
  PAYMENT_IDENTIFIER,
} from '@x402/extensions/payment-identifier';
import {
  parseSIWxHeader,
  type SIWxPayload,
  validateSIWxMessage,
  verifySIWxSignature,
} from '@x402/extensions/sign-in-with-x';
import { isPersonalSignatureBy } from '../../platform/chain/signatures.ts';

// The x402 extensions' own helpers, read and declared here so the rules in domain.ts stay free
// of packages: what a payload's payment-identifier block says, and what a quote declares.

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The payer's idempotency id (the `payment-identifier` extension), read and checked by the
 * extension's own validator: none, an id, or why the extension's block is not acceptable.
 *
 * The block's `info` is held to the schema Tollbook declared, never to a `schema` the payer sends
 * back: a payer's schema says only what that payer likes, and the validator compiles any schema
 * it is handed afresh on every call (about 9 ms of CPU for the declared one, more for a larger
 * one). The validator's own checks of `info` (a boolean `required`; an optional `id` of 16–128
 * letters, digits, `-` or `_`) are the declared schema's rules, which `extensions.test.ts` holds
 * them to; so the block goes to the validator without the payer's schema.
 */
export function readPaymentId(
  payload: unknown,
): { ok: true; id: string | null } | { ok: false; reason: string } {
  if (!isObject(payload)) return { ok: true, id: null };
  const extensions = isObject(payload.extensions) ? payload.extensions : undefined;
  const block = extensions?.[PAYMENT_IDENTIFIER];
  const checked = isObject(block)
    ? { ...payload, extensions: { ...extensions, [PAYMENT_IDENTIFIER]: withoutSchema(block) } }
    : payload;
  // The extension reads only the payload's `extensions` block and validates that block itself, so
  // any object may be handed to it; the cast states the library's parameter type, nothing more.
  const { id, validation } = extractAndValidatePaymentIdentifier(checked as unknown as PaymentPayload);
  if (!validation.valid)
    return { ok: false, reason: (validation.errors ?? ['The payment identifier is malformed.']).join('; ') };
  return { ok: true, id };
}

function withoutSchema(block: Record<string, unknown>): Record<string, unknown> {
  const { schema: _payersSchema, ...rest } = block;
  return rest;
}

/** The extension's declaration a quote carries: a payer may send an id; none is required. */
export function paymentIdDeclaration() {
  return { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) };
}

/** A sign-in the extension accepted: who signed, the nonce, and until when the message holds. */
export type SignedIn = { address: string; nonce: string; expiresAt: Date };

/**
 * A `SIGN-IN-WITH-X` header read, checked and verified by the extension's own helpers: parsed
 * (`parseSIWxHeader`), its domain and URI bound to the resource's origin and its times checked
 * (`validateSIWxMessage`, which allows a message five minutes after it was issued), and its EIP-191
 * signature checked (`verifySIWxSignature`, with the book's own EIP-191 verifier). Only EVM sign-ins are taken: the credit is keyed
 * by an EVM address. Nothing here remembers nonces; the caller makes each one single-use.
 */
export async function readSignIn(
  header: string,
  resourceUrl: URL,
): Promise<{ ok: true; signedIn: SignedIn } | { ok: false; reason: string; message: string }> {
  let payload: SIWxPayload;
  try {
    payload = parseSIWxHeader(header);
  } catch (error) {
    // The parser throws only to say the header is malformed; its message says how.
    return { ok: false, reason: 'invalid_siwx_header', message: (error as Error).message };
  }
  if (!payload.chainId.startsWith('eip155:'))
    return { ok: false, reason: 'invalid_siwx_unsupported_chain', message: 'Sign in with an EVM account.' };
  const validation = await validateSIWxMessage(payload, new URL(resourceUrl.origin));
  if (!validation.isValid)
    return { ok: false, reason: validation.invalidReason, message: validation.invalidMessage };
  const verified = await verifySIWxSignature(payload, { evmVerifier: personalSignatureVerifier });
  if (!verified.isValid)
    return { ok: false, reason: verified.invalidReason, message: verified.invalidMessage };
  return {
    ok: true,
    signedIn: { address: verified.payer, nonce: payload.nonce, expiresAt: signInExpiry(payload) },
  };
}

/**
 * The extension's EVM verifier seam, filled with the book's one EIP-191 check (libsecp256k1's
 * recovery, platform/chain/signatures.ts) instead of the extension's default (viem's recovery in
 * JavaScript, six times the CPU). Both take EOA signatures only: no EIP-1271 or EIP-6492 call.
 */
const personalSignatureVerifier = (args: { address: string; message: string; signature: string }) =>
  isPersonalSignatureBy(args.address, args.message, args.signature);

/** The last moment the validator accepts this message: its expiration, at most five minutes after issue. */
function signInExpiry(payload: SIWxPayload): Date {
  const latest = new Date(payload.issuedAt).getTime() + SIGN_IN_MAX_AGE_MS;
  const expiration = payload.expirationTime ? new Date(payload.expirationTime).getTime() : latest;
  return new Date(Math.min(latest, expiration));
}

/** `validateSIWxMessage`'s default limit on a message's age, which readSignIn keeps. */
const SIGN_IN_MAX_AGE_MS = 5 * 60 * 1000;
