import { createHmac, timingSafeEqual } from 'node:crypto';

// X-Service-Signature (spec §5.7, §6): "sha256=" + hex HMAC-SHA256 of the raw body bytes under the
// target's secret. Receivers must verify the bytes they received, not a re-serialised object.

export const SIGNATURE_PREFIX = 'sha256=';

export function signBody(secret: string, body: Buffer): string {
  return SIGNATURE_PREFIX + createHmac('sha256', secret).update(body).digest('hex');
}

/** Checks a signature header against the raw body in constant time. */
export function verifySignature(secret: string, body: Buffer, header: string): boolean {
  const expected = Buffer.from(signBody(secret, body));
  const given = Buffer.from(header.trim().toLowerCase());
  return given.length === expected.length && timingSafeEqual(given, expected);
}
