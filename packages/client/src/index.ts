import { randomUUID } from 'node:crypto';
import createFetchClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema.ts';

export type { components, paths, webhooks } from './schema.ts';
export {
  TollbookWebhookError,
  type TollbookWebhookEvent,
  type VerifyOptions,
  verifyWebhook,
  verifyWebhookRequest,
} from './webhooks.ts';

/** The spec's named shapes: `Schemas['ChargeOut']`, `Schemas['InvoiceOut']`, … */
export type Schemas = components['schemas'];

/** A refusal from Tollbook: the HTTP status and the stable code of its error body. */
export class TollbookError extends Error {
  readonly status: number;
  /** The stable code (`insufficient_balance`, `not_found`, …); `validation_failed` for a 422 schema failure. */
  readonly code: string;
  readonly detail: string;
  readonly details: unknown;
  readonly requestId: string | undefined;

  constructor(status: number, code: string, detail: string, details: unknown, requestId: string | undefined) {
    super(`${status} ${code}: ${detail}`);
    this.name = 'TollbookError';
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.details = details;
    this.requestId = requestId;
  }
}

export type TollbookOptions = {
  /** The server's address, e.g. https://books.example.org */
  baseUrl: string;
  /** An integration key: oit_ and 43 characters. */
  key: string;
  /** Attempts per call, counting the first (default 3). Only safe calls are retried. */
  attemptsMax?: number;
  /** The longest wait between attempts, whatever Retry-After says (default 30 s). */
  retryWaitMaxMs?: number;
  /** A fetch to send with (default: the global fetch). */
  fetch?: (request: Request) => Promise<Response>;
  /** Waits between attempts; replaceable so tests need not sleep. */
  sleep?: (ms: number) => Promise<void>;
};

export type Tollbook = Client<paths> & { baseUrl: string };

const RETRY_WAIT_FIRST_MS = 250;

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A write is retried only when it carries an Idempotency-Key (the server then answers a retry
 * with the first result); a read is always safe to retry.
 */
function isRetrySafe(request: Request): boolean {
  return request.method === 'GET' || request.headers.has('idempotency-key');
}

/** How long to wait before the next attempt: Retry-After when the server said, else backoff. */
function waitMs(response: Response | undefined, attempt: number, maxMs: number): number {
  const header = response?.headers.get('retry-after');
  const seconds =
    header !== null && header !== undefined && /^\d+$/.test(header) ? Number(header) : undefined;
  const backoff = RETRY_WAIT_FIRST_MS * 2 ** (attempt - 1);
  return Math.min(seconds !== undefined ? seconds * 1000 : backoff, maxMs);
}

/**
 * 429 always; 409 only when the same Idempotency-Key is still running on the server (a conflict
 * of state, such as an invoice number taken, would answer the same again).
 */
async function isRetryableAnswer(response: Response): Promise<boolean> {
  if (response.status === 429) return true;
  if (response.status !== 409) return false;
  const body = (await response
    .clone()
    .json()
    .catch(() => undefined)) as { error?: string } | undefined;
  return body?.error === 'idempotency_in_progress';
}

/** A fetch that retries safe calls after a network error, a 429 or an idempotency 409. */
function retryingFetch(options: TollbookOptions): (request: Request) => Promise<Response> {
  const send = options.fetch ?? ((request: Request) => fetch(request));
  const attemptsMax = Math.max(1, options.attemptsMax ?? 3);
  const waitMaxMs = options.retryWaitMaxMs ?? 30_000;
  const sleep = options.sleep ?? sleepFor;
  return async (request) => {
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= attemptsMax || !isRetrySafe(request);
      let response: Response;
      try {
        response = await send(last ? request : request.clone());
      } catch (error) {
        if (last) throw error;
        await sleep(waitMs(undefined, attempt, waitMaxMs));
        continue;
      }
      if (last || !(await isRetryableAnswer(response))) return response;
      await sleep(waitMs(response, attempt, waitMaxMs));
    }
  };
}

/** Money writes: every POST under /integration except the key check. */
function isMoneyWrite(request: Request, baseUrl: string): boolean {
  const path = request.url.slice(baseUrl.length);
  return (
    request.method === 'POST' && path.startsWith('/integration/') && !path.startsWith('/integration/ping')
  );
}

const idempotencyMiddleware = (baseUrl: string): Middleware => ({
  onRequest({ request }) {
    // One key per call, made before the first attempt, so every retry carries the same one.
    if (isMoneyWrite(request, baseUrl) && !request.headers.has('idempotency-key')) {
      request.headers.set('idempotency-key', randomUUID());
    }
    return request;
  },
});

const errorMiddleware: Middleware = {
  async onResponse({ response }) {
    if (response.ok) return response;
    const body = (await response
      .clone()
      .json()
      .catch(() => undefined)) as { error?: string; detail?: unknown; details?: unknown } | undefined;
    const requestId = response.headers.get('x-request-id') ?? undefined;
    if (body && Array.isArray(body.detail) && body.error === undefined) {
      throw new TollbookError(
        response.status,
        'validation_failed',
        'The request failed validation.',
        body.detail,
        requestId,
      );
    }
    const code = typeof body?.error === 'string' ? body.error : `http_${response.status}`;
    const detail = typeof body?.detail === 'string' ? body.detail : response.statusText;
    throw new TollbookError(response.status, code, detail, body?.details, requestId);
  },
};

/**
 * The typed client: `tollbook.POST('/integration/charges', { body })` resolves to `{ data }`
 * typed from the document, and throws a TollbookError for any refusal. Money writes get an
 * Idempotency-Key unless you pass your own (`headers: { 'Idempotency-Key': … }`).
 */
export function createTollbook(options: TollbookOptions): Tollbook {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const client = createFetchClient<paths>({
    baseUrl,
    headers: { authorization: `Bearer ${options.key}` },
    fetch: retryingFetch(options),
  });
  client.use(idempotencyMiddleware(baseUrl), errorMiddleware);
  return Object.assign(client, { baseUrl });
}

export {
  type ChargeOutcome,
  type ChargePerCallOptions,
  type ChargeRequestInfo,
  chargeClient,
  chargeForCall,
  deriveIdempotencyKey,
} from './charge-per-call.ts';
export {
  type ProtectedRequestContext,
  type ProtectedRequestDecision,
  type X402CreditOptions,
  x402Credit,
} from './x402-credit.ts';
