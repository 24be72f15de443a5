import { createHmac, timingSafeEqual } from 'node:crypto';

// Deliveries of both channels carry two kinds of signature, HMAC-SHA256 under the secret (the
// key's webhook secret, or the subscription's):
// - X-Service-Signature: "sha256=" and the hex HMAC of the raw body bytes, keyed by the secret's
//   text; always under the current secret.
// - Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature): "v1," and the base64
//   HMAC of "<id>.<timestamp>.<body>", keyed by the bytes the base64 after "whsec_" stands for.
//   For 24 hours after a rotation it holds two signatures, under the new secret and the old one.
// Verify the bytes as received: a parsed and re-serialised object would not match. Passing both
// secrets (old and new) while you switch accepts a delivery signed under either.

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

type Secrets = string | readonly string[];
type HeaderValue = string | string[] | null | undefined;

function secretList(secrets: Secrets): string[] {
  const list = (typeof secrets === 'string' ? [secrets] : [...secrets]).filter((secret) => secret.length > 0);
  if (list.length === 0) throw new TollbookWebhookError('The webhook secret is empty.');
  return list;
}

function bytesOf(rawBody: string | Uint8Array): Buffer {
  return typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
}

function single(header: HeaderValue): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function parsed(bytes: Buffer): TollbookWebhookEvent {
  try {
    return JSON.parse(bytes.toString('utf8')) as TollbookWebhookEvent;
  } catch {
    throw new TollbookWebhookError('The signed body is not JSON.');
  }
}

/**
 * Checks X-Service-Signature in constant time under the secret (or any of several, while you
 * switch after a rotation) and answers the parsed body; throws a TollbookWebhookError when the
 * header is missing or matches none.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  header: HeaderValue,
  secret: Secrets,
): TollbookWebhookEvent {
  const given = single(header);
  if (given === undefined) throw new TollbookWebhookError('The X-Service-Signature header is missing.');
  const secrets = secretList(secret);
  const bytes = bytesOf(rawBody);
  const received = given.trim().toLowerCase();
  const matches = secrets.some((each) =>
    sameText(received, `sha256=${createHmac('sha256', each).update(bytes).digest('hex')}`),
  );
  if (!matches) throw new TollbookWebhookError('The signature does not match this body and secret.');
  return parsed(bytes);
}

export type VerifyOptions = {
  /** How far webhook-timestamp may be from now, in seconds; default 300. */
  toleranceSeconds?: number;
  /** The time to check webhook-timestamp against; default the current time. */
  now?: Date;
};

function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/**
 * Checks a delivery by its headers: the Standard Webhooks ones when present (any `v1,` signature
 * under any of the secrets, and a timestamp within the tolerance, which refuses replays), else
 * X-Service-Signature. Header names are matched in any case. Answers the parsed body; throws a
 * TollbookWebhookError otherwise.
 */
export function verifyWebhookRequest(
  rawBody: string | Uint8Array,
  headers: Record<string, HeaderValue>,
  secret: Secrets,
  options: VerifyOptions = {},
): TollbookWebhookEvent {
  const lower = new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), single(value)]));
  const signature = lower.get('webhook-signature');
  if (signature === undefined) return verifyWebhook(rawBody, lower.get('x-service-signature'), secret);
  const id = lower.get('webhook-id');
  const timestamp = lower.get('webhook-timestamp');
  if (id === undefined || timestamp === undefined || !/^[0-9]{1,12}$/.test(timestamp)) {
    throw new TollbookWebhookError('The webhook-id or webhook-timestamp header is missing or malformed.');
  }
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - Number(timestamp)) > (options.toleranceSeconds ?? 300)) {
    throw new TollbookWebhookError(
      'The webhook-timestamp is outside the tolerance; refusing a possible replay.',
    );
  }
  const secrets = secretList(secret);
  const bytes = bytesOf(rawBody);
  const given = signature.split(' ').filter((part) => part.startsWith('v1,'));
  const matches = secrets.some((each) => {
    const expected = `v1,${createHmac('sha256', standardKey(each)).update(`${id}.${timestamp}.`).update(bytes).digest('base64')}`;
    return given.some((part) => sameText(part, expected));
  });
  if (!matches) throw new TollbookWebhookError('No webhook-signature matches this body and these secrets.');
  return parsed(bytes);
}
