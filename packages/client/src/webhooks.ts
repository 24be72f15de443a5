import { createHmac, timingSafeEqual } from 'node:crypto';

// Both webhook channels sign alike: X-Service-Signature is "sha256=" and the hex HMAC-SHA256 of
// the raw body bytes under the secret (the key's webhook secret, or the subscription's). Verify
// the bytes as received: a parsed and re-serialised object would not match.

/** A delivery of either channel: key events carry space_id and data, book events version and fields. */
export type TollbookWebhookEvent = {
  event: string;
  at: string;
  space_id?: string;
  version?: number;
  data?: Record<string, unknown>;
  [field: string]: unknown;
};

export class TollbookWebhookError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TollbookWebhookError';
  }
}

/**
 * Checks a delivery's signature in constant time and answers its parsed body; throws a
 * TollbookWebhookError when the header is missing or does not match.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  header: string | string[] | null | undefined,
  secret: string,
): TollbookWebhookEvent {
  const given = Array.isArray(header) ? header[0] : header;
  if (typeof given !== 'string' || given.length === 0) {
    throw new TollbookWebhookError('The X-Service-Signature header is missing.');
  }
  if (secret.length === 0) throw new TollbookWebhookError('The webhook secret is empty.');
  const bytes = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(bytes).digest('hex')}`);
  const received = Buffer.from(given.trim().toLowerCase());
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) {
    throw new TollbookWebhookError('The signature does not match this body and secret.');
  }
  try {
    return JSON.parse(bytes.toString('utf8')) as TollbookWebhookEvent;
  } catch {
    throw new TollbookWebhookError('The signed body is not JSON.');
  }
}
