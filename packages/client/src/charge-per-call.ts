import { createHash, randomUUID } from 'node:crypto';
import { createTollbook, type Schemas, type Tollbook, TollbookError } from './index.ts';

// The core of the charge-per-call middleware (@tollbook/express, @tollbook/fastify): charge the
// caller's prepaid balance before the handler runs; when the balance cannot carry the call,
// answer 402 with the top-up request and the balance page. Each call gets an Idempotency-Key
// derived from the request, so a retried request is charged once.

export type ChargeRequestInfo = {
  method: string;
  /** The path and query the caller asked for. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
};

export type ChargePerCallOptions<Req> = {
  /** The Tollbook server and an integration key with the payments scope. */
  baseUrl: string;
  key: string;
  /** The account the charges are booked to (a USDC wallet takes the top-ups). */
  accountId: string;
  /** The price of one call: a decimal string such as "0.01", or a function of the request. */
  amount: string | ((req: Req) => string);
  /** Who pays: your own identifier of the caller (an API key's owner, a user id); undefined refuses the call. */
  clientRef: (req: Req) => string | undefined;
  /** What the call is filed under; default the route's path. */
  resource?: (req: Req) => string;
  /** Size of the top-up request a refused call asks for; default: Tollbook's. */
  topUpAmount?: string;
  /** A client to use instead of one made from baseUrl and key (tests, shared retries). */
  client?: Tollbook;
};

export type ChargeOutcome =
  | { ok: true; charge: Schemas['ChargeOut'] }
  | { ok: false; status: number; body: Record<string, unknown> };

/**
 * The Idempotency-Key of one call. A caller that retries sends the same Idempotency-Key (or
 * X-Request-Id) again: the derived key is then the same and Tollbook answers the first charge.
 * Without either header every request is a new call (two identical calls are two charges).
 */
export function deriveIdempotencyKey(clientRef: string, request: ChargeRequestInfo): string {
  const given = request.headers['idempotency-key'] ?? request.headers['x-request-id'];
  const callerKey = Array.isArray(given) ? given[0] : given;
  if (callerKey === undefined || callerKey === '') return `call-${randomUUID()}`;
  const digest = createHash('sha256')
    .update([clientRef, request.method.toUpperCase(), request.url.split('?')[0], callerKey].join('\n'))
    .digest('hex');
  return `call-${digest.slice(0, 48)}`;
}

export function chargeClient<Req>(options: ChargePerCallOptions<Req>): Tollbook {
  return options.client ?? createTollbook({ baseUrl: options.baseUrl, key: options.key });
}

/** Charges one call; answers what the middleware sends back when the handler must not run. */
export async function chargeForCall<Req>(
  tollbook: Tollbook,
  options: ChargePerCallOptions<Req>,
  req: Req,
  request: ChargeRequestInfo,
): Promise<ChargeOutcome> {
  const clientRef = options.clientRef(req);
  if (clientRef === undefined || clientRef === '') {
    return {
      ok: false,
      status: 401,
      body: { error: 'unauthorized', detail: 'This call is paid per use: identify yourself to be charged.' },
    };
  }
  const amount = typeof options.amount === 'function' ? options.amount(req) : options.amount;
  try {
    const { data } = await tollbook.POST('/integration/charges', {
      headers: { 'idempotency-key': deriveIdempotencyKey(clientRef, request) },
      body: {
        client_ref: clientRef,
        account_id: options.accountId,
        amount,
        resource: options.resource ? options.resource(req) : request.url.split('?')[0]!,
        ...(options.topUpAmount === undefined ? {} : { top_up_amount: options.topUpAmount }),
      },
    });
    const charge = data!;
    if (charge.paid) return { ok: true, charge };
    return {
      ok: false,
      status: 402,
      body: {
        error: 'insufficient_balance',
        detail: `Your prepaid balance (${charge.balance_usd} USD) cannot carry this call of ${amount}. Top it up at top_up.url.`,
        balance_usd: charge.balance_usd,
        top_up: charge.top_up,
        balance_url: charge.balance_url,
      },
    };
  } catch (error) {
    // Fail closed: a call that could not be charged is not served.
    const code = error instanceof TollbookError ? error.code : 'unreachable';
    return {
      ok: false,
      status: 503,
      body: { error: 'billing_unavailable', detail: `The call could not be charged (${code}); try again.` },
    };
  }
}
