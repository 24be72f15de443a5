import { createHmac, timingSafeEqual } from 'node:crypto';

// Two signatures ride on every delivery, both HMAC-SHA256 under the target's secret.
// X-Service-Signature (spec §5.7, §6): "sha256=" + hex HMAC of the raw body bytes, keyed by the
// secret's text. webhook-signature (Standard Webhooks): "v1," + base64 HMAC of
// "<webhook-id>.<webhook-timestamp>.<body>", keyed by the bytes the base64 after "whsec_" stands
// for, as every Standard Webhooks library reads a secret. Receivers verify the bytes they
// received, not a re-serialised object.

export const SIGNATURE_PREFIX = 'sha256=';
export const STANDARD_SECRET_PREFIX = 'whsec_';
const STANDARD_VERSION = 'v1';

export function signBody(secret: string, body: Buffer): string {
  return SIGNATURE_PREFIX + createHmac('sha256', secret).update(body).digest('hex');
}

/** Checks a signature header against the raw body in constant time. */
export function verifySignature(secret: string, body: Buffer, header: string): boolean {
  const expected = Buffer.from(signBody(secret, body));
  const given = Buffer.from(header.trim().toLowerCase());
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function standardKey(secret: string): Buffer {
  const encoded = secret.startsWith(STANDARD_SECRET_PREFIX)
    ? secret.slice(STANDARD_SECRET_PREFIX.length)
    : secret;
  return Buffer.from(encoded, 'base64');
}

/** One Standard Webhooks signature, `v1,<base64>`. */
export function signStandard(
  secret: string,
  message: { id: string; timestamp: number; body: Buffer },
): string {
  const digest = createHmac('sha256', standardKey(secret))
    .update(`${message.id}.${message.timestamp}.`)
    .update(message.body)
    .digest('base64');
  return `${STANDARD_VERSION},${digest}`;
}

/**
 * The Standard Webhooks headers: the event id, the send time in Unix seconds, and one signature
 * per secret (two while a rotation overlaps), separated by a space.
 */
export function standardHeaders(secrets: readonly string[], eventId: string, at: Date, body: Buffer) {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets
      .map((secret) => signStandard(secret, { id: eventId, timestamp, body }))
      .join(' '),
  };
}

/** Whether any `v1,` signature in a webhook-signature header matches, in constant time. */
export function verifyStandard(
  secret: string,
  message: { id: string; timestamp: number; body: Buffer },
  header: string,
): boolean {
  const expected = Buffer.from(signStandard(secret, message));
  return header
    .split(' ')
    .filter((part) => part.length > 0)
    .some((part) => {
      const given = Buffer.from(part);
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}
