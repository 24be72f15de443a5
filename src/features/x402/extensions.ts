import type { PaymentPayload } from '@x402/core/types';
import {
  declarePaymentIdentifierExtension,
  extractAndValidatePaymentIdentifier,
  PAYMENT_IDENTIFIER,
} from '@x402/extensions/payment-identifier';

// The x402 extensions' own helpers, read and declared here so the rules in domain.ts stay free
// of packages: what a payload's payment-identifier block says, and what a quote declares.

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The payer's idempotency id (the `payment-identifier` extension), read and checked by the
 * extension's own validator: none, an id, or why the extension's block is not acceptable.
 */
export function readPaymentId(
  payload: unknown,
): { ok: true; id: string | null } | { ok: false; reason: string } {
  if (!isObject(payload)) return { ok: true, id: null };
  // The extension reads only the payload's `extensions` block and validates that block itself, so
  // any object may be handed to it; the cast states the library's parameter type, nothing more.
  const { id, validation } = extractAndValidatePaymentIdentifier(payload as unknown as PaymentPayload);
  if (!validation.valid)
    return { ok: false, reason: (validation.errors ?? ['The payment identifier is malformed.']).join('; ') };
  return { ok: true, id };
}

/** The extension's declaration a quote carries: a payer may send an id; none is required. */
export function paymentIdDeclaration() {
  return { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) };
}
