import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorBody } from '../../core/errors.ts';
import { isConnectionLost } from '../db/database.ts';
import { isRedisUnreachable } from '../redis.ts';
import { hasLoneSurrogate, InvalidJsonError } from './json-body.ts';
import { toValidationItems, type ValidationItem } from './validation.ts';

// The one place a refusal is turned into a response. Everything that is not an expected refusal
// is a bug: it is logged with the request id and answered 500 `internal` with no internals.

export type RenderedError = {
  status: number;
  body: ErrorBody | { detail: ValidationItem[] };
  headers?: Record<string, string>;
};

const FASTIFY_CODES: Record<string, () => RenderedError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => ({
    status: 413,
    body: { error: 'payload_too_large', detail: 'The body is larger than 1 MiB.' },
  }),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => ({
    status: 415,
    body: { error: 'unsupported_media_type', detail: 'Send the body as application/json.' },
  }),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => ({
    status: 422,
    body: {
      detail: [{ loc: ['body'], msg: 'The body is empty; send a JSON object.', type: 'json_invalid' }],
    },
  }),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => ({
    status: 400,
    body: { error: 'invalid_request', detail: 'The Content-Length header does not match the body.' },
  }),
};

/** A refusal whose answer is already decided (used by hooks that check before validation). */
export class RenderedRefusal extends Error {
  constructor(readonly rendered: RenderedError) {
    super('refused');
    this.name = 'RenderedRefusal';
  }
}

export function renderError(error: unknown): RenderedError | null {
  if (error instanceof RenderedRefusal) return error.rendered;
  if (error instanceof AppError) {
    const rendered: RenderedError = { status: error.status, body: error.toBody() };
    const retryAfter = error.details?.retry_after_seconds;
    if (error.code === 'rate_limited' && typeof retryAfter === 'number') {
      rendered.headers = { 'retry-after': String(retryAfter) };
      // Only the per-key limiter has a limit to report; throttled logins say when to come back.
      if (error.details?.limit !== undefined) {
        Object.assign(rendered.headers, {
          'ratelimit-limit': String(error.details.limit),
          'ratelimit-remaining': '0',
          'ratelimit-reset': String(retryAfter),
        });
      }
    }
    return rendered;
  }
  if (error instanceof InvalidJsonError) {
    return {
      status: 422,
      body: { detail: [{ loc: ['body', ...error.loc], msg: error.message, type: error.type }] },
    };
  }
  const fastifyError = error as FastifyError;
  if (fastifyError?.validation) {
    const items = toValidationItems(fastifyError.validation, fastifyError.validationContext ?? 'body');
    return { status: 422, body: { detail: items } };
  }
  const known = fastifyError?.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  if (known) return known();
  if (isConnectionLost(error) || isRedisUnreachable(error)) return storeUnreachable();
  const rule = databaseRule(error);
  // Two writes raced for one unique key (two first charges of a new client, say): the caller
  // may simply retry. Every other refused rule means the code let a bad row through: a bug.
  if (rule?.sqlState === UNIQUE_VIOLATION) {
    return {
      status: 409,
      body: {
        error: 'conflict',
        detail: 'Another request wrote the same record at the same moment; retry this one.',
      },
    };
  }
  return null;
}

const UNIQUE_VIOLATION = '23505';
const CONNECTION_LOST_RETRY_SECONDS = 1;

/**
 * The database or Redis connection was cut or refused under this request. Nothing is decided by
 * it: the next attempt gets a fresh connection, and a write retried with its Idempotency-Key is
 * replayed or redone, never done twice.
 */
function storeUnreachable(): RenderedError {
  return {
    status: 503,
    body: {
      error: 'service_unavailable',
      detail:
        'The server lost its connection to its database or Redis while answering; retry shortly (a write with the same Idempotency-Key).',
    },
    headers: { 'retry-after': String(CONNECTION_LOST_RETRY_SECONDS) },
  };
}

/** A rule the database refused a write by (class 23, integrity), named for the log and the 500. */
export type DatabaseRule = { sqlState: string; name: string };

export function databaseRule(error: unknown): DatabaseRule | null {
  if (error === null || typeof error !== 'object') return null;
  const fields = error as { code?: unknown; constraint?: unknown; table?: unknown; message?: unknown };
  if (typeof fields.code !== 'string' || !/^23[0-9A-Z]{3}$/.test(fields.code)) return null;
  // The balance trigger names no constraint; its message says which rule it is.
  const name =
    typeof fields.constraint === 'string' && fields.constraint !== ''
      ? fields.constraint
      : /does not balance/.test(String(fields.message))
        ? 'ledger_postings_balance'
        : `${String(fields.table ?? 'unknown table')} (${fields.code})`;
  return { sqlState: fields.code, name };
}

/** The 500 for a refused database rule: names the rule (no data), logged with the request id. */
export function renderBrokenRule(rule: DatabaseRule, requestId: string): RenderedError {
  return {
    status: 500,
    body: {
      error: 'internal',
      detail: `A bug on our side let through a write the database refused (rule ${rule.name}); nothing was saved. Quote request ${requestId}.`,
    },
  };
}

export function sendRendered(reply: FastifyReply, rendered: RenderedError): FastifyReply {
  if (rendered.headers) reply.headers(rendered.headers);
  return reply
    .code(rendered.status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(rendered.body));
}

/**
 * PostgreSQL text cannot hold NUL, and no address or query of ours has a use for it: a NUL in a
 * path parameter or a query value is refused before any handler can pass it to a query. Half a
 * surrogate pair is refused the same way (`string_unicode`), as it is in bodies.
 */
function refuseNulInAddress(request: FastifyRequest): void {
  const places: [string, unknown][] = [
    ['path', request.params],
    ['query', request.query],
  ];
  const detail: ValidationItem[] = [];
  for (const [where, values] of places) {
    if (values === null || typeof values !== 'object') continue;
    for (const [name, value] of Object.entries(values as Record<string, unknown>)) {
      const texts = (Array.isArray(value) ? value : [value]).filter((text) => typeof text === 'string');
      if (texts.some((text) => text.includes('\u0000'))) {
        detail.push({
          loc: [where, name],
          msg: 'Text may not contain the NUL character.',
          type: 'value_error',
        });
      } else if (texts.some(hasLoneSurrogate) || hasLoneSurrogate(name)) {
        detail.push({
          loc: [where, name],
          msg: 'Text may not contain half of a UTF-16 surrogate pair; send whole characters.',
          type: 'string_unicode',
        });
      }
    }
  }
  if (detail.length > 0) throw new RenderedRefusal({ status: 422, body: { detail } });
}

const unsupportedMedia = (detail: string) =>
  new RenderedRefusal({ status: 415, body: { error: 'unsupported_media_type', detail } });

/**
 * Bodies are read as UTF-8 JSON exactly as sent. A body in another charset would be misread, and
 * a compressed one would be parsed as its compressed bytes, so both are refused with 415 before
 * a byte is read (after the route's authentication, like every other body check).
 */
export function refuseUnreadableBody(request: FastifyRequest): void {
  const length = request.headers['content-length'];
  const hasBody =
    request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  if (!hasBody) return;
  const encoding = request.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity')
    throw unsupportedMedia('Send the body uncompressed: no Content-Encoding is accepted.');
  const contentType = request.headers['content-type'];
  if (contentType === undefined) return;
  for (const parameter of contentType.split(';').slice(1)) {
    const equals = parameter.indexOf('=');
    if (equals < 0 || parameter.slice(0, equals).trim().toLowerCase() !== 'charset') continue;
    const charset = parameter
      .slice(equals + 1)
      .trim()
      .toLowerCase();
    const unquoted = charset.startsWith('"') && charset.endsWith('"') ? charset.slice(1, -1) : charset;
    if (unquoted !== 'utf-8' && unquoted !== 'utf8')
      throw unsupportedMedia(`Send the body as UTF-8 JSON; charset=${unquoted} is not read.`);
  }
}

/** The client went away while its body was arriving: nothing is wrong on our side. */
/**
 * The caller went away mid-request. A reset on the caller's own socket is that; a reset on the
 * database's or Redis's connection, with the caller still there, is a lost store (503).
 */
function isClientAbort(error: unknown, request: FastifyRequest): boolean {
  if (request.raw.aborted === true) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return (code === 'ECONNRESET' || code === 'ECONNABORTED') && request.raw.socket?.destroyed === true;
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => refuseNulInAddress(request));
  app.addHook('preParsing', async (request, _reply, payload) => {
    refuseUnreadableBody(request);
    return payload;
  });
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    if (isClientAbort(error, request)) {
      request.log.info({ code: (error as { code?: unknown }).code }, 'client aborted the request');
      return sendRendered(reply, {
        status: 400,
        body: { error: 'invalid_request', detail: 'The request was aborted before its body arrived.' },
      });
    }
    const rendered = renderError(error);
    if (rendered?.status === 503)
      request.log.warn({ err: error }, 'answered 503: the database or Redis was not reachable');
    if (rendered) return sendRendered(reply, rendered);
    const rule = databaseRule(error);
    if (rule) {
      request.log.error({ err: error, rule: rule.name }, 'bug: the database refused a write');
      return sendRendered(reply, renderBrokenRule(rule, request.id));
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendRendered(reply, {
      status: 500,
      body: { error: 'internal', detail: `Something went wrong on our side; quote request ${request.id}.` },
    });
  });
  app.setNotFoundHandler((request, reply) =>
    sendRendered(reply, {
      status: 404,
      body: { error: 'not_found', detail: `No route ${request.method} ${request.url.split('?')[0]}.` },
    }),
  );
}
