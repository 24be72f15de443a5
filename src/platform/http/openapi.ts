// How a route describes itself in the OpenAPI document, and the pass that turns the routes'
// schemas into the published document. A route spreads `routeDoc({...})` into its schema: the
// operation's stable id, a summary, a description of its rules, its feature tags and the
// refusals it can answer. The refusals become references to shared response objects (one
// error body, the validation body for 422, Retry-After on 429), so every route answers them
// the same way. test/openapi.test.ts fails when a route skips any of this.

/** The refusals a route can document; each maps to one shared response object. */
export type ErrorStatus = 400 | 401 | 402 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 502 | 503;

export type RouteDoc = {
  /** Stable and unique: generated clients name their methods after it. camelCase verb first. */
  operationId: string;
  summary: string;
  /** The route's rules, in sentences: who may call it, what it refuses, what it changes. */
  description: string;
  tags: readonly string[];
  errors: readonly ErrorStatus[];
};

/** The key in a route schema that carries its refusals until the document pass resolves them. */
export const ERRORS_KEY = 'x-errors';

/** Spread into a route's schema: `schema: { ...routeDoc({...}), body, response }`. */
export function routeDoc(doc: RouteDoc) {
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    description: doc.description,
    tags: [...doc.tags],
    [ERRORS_KEY]: [...doc.errors],
  };
}

/** A route's words, with the peers' statuses it may answer on top of its kind's refusals. */
export type PeeredDoc = Pick<RouteDoc, 'operationId' | 'summary' | 'description'> & {
  peers?: readonly ErrorStatus[];
};

/** `routeDoc` for a route whose refusals are its kind's (`base`) and its peers'. */
export function peeredRouteDoc(
  { peers = [], ...doc }: PeeredDoc,
  tags: readonly string[],
  base: readonly ErrorStatus[],
) {
  return routeDoc({ ...doc, tags, errors: [...base, ...peers] });
}

/** What every route under /integration can answer besides its own refusals: the key door and body rules. */
export const INTEGRATION_READ_ERRORS: readonly ErrorStatus[] = [401, 403, 404, 422, 429];
/** A money or record write under /integration: also 409 (same key in flight), 413 and 415 for bodies. */
export const INTEGRATION_WRITE_ERRORS: readonly ErrorStatus[] = [401, 403, 404, 409, 413, 415, 422, 429];
/** An app route behind a session that reads. */
export const APP_READ_ERRORS: readonly ErrorStatus[] = [401, 403, 404, 422, 429];
/** An app route behind a session that takes a body. */
export const APP_WRITE_ERRORS: readonly ErrorStatus[] = [401, 403, 404, 409, 413, 415, 422, 429];
/** A write that asks a peer (the chain, a mail server, Telegram) before it answers, and says so when the peer refuses. */
export const UPSTREAM_ERRORS: readonly ErrorStatus[] = [502];
/** A write that delivers by mail or through the chat bot: the peer refused (502) or no bot runs here (503). */
export const DELIVERY_ERRORS: readonly ErrorStatus[] = [502, 503];

type Json = Record<string, unknown>;

const errorRef = { $ref: '#/components/schemas/ErrorBody' };
const validationRef = { $ref: '#/components/schemas/HTTPValidationError' };

function errorExample(error: string, detail: string) {
  return { value: { error, detail } };
}

const rateHeaders = {
  'RateLimit-Limit': {
    description: 'Calls allowed per rolling minute for this key.',
    schema: { type: 'integer' },
  },
  'RateLimit-Remaining': { description: 'Calls left in the current window.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window frees a call.', schema: { type: 'integer' } },
};

/** The shared response objects, one per refusal status, named as `#/components/responses/<name>`. */
export const ERROR_RESPONSES: Record<ErrorStatus, { name: string; response: Json }> = {
  400: {
    name: 'BadRequest',
    response: {
      description: 'The body is not JSON, or the URL is malformed.',
      content: {
        'application/json': {
          schema: errorRef,
          examples: { invalid_json: errorExample('invalid_json', 'The body is not valid JSON.') },
        },
      },
    },
  },
  401: {
    name: 'Unauthorized',
    response: {
      description:
        'The credential is missing, unknown, expired or revoked (one answer covers all of them on purpose).',
      content: {
        'application/json': {
          schema: errorRef,
          examples: { unauthorized: errorExample('unauthorized', 'The key is not valid.') },
        },
      },
    },
  },
  402: {
    name: 'PaymentRequired',
    response: {
      description: 'The prepaid balance cannot carry this; the body names the top-up request to pay.',
      content: {
        'application/json': {
          schema: errorRef,
          examples: {
            card_declined: errorExample('card_declined', 'The card was declined.'),
          },
        },
      },
    },
  },
  403: {
    name: 'Forbidden',
    response: {
      description: 'The credential is valid but lacks the scope, role or plan this needs.',
      content: {
        'application/json': {
          schema: errorRef,
          examples: { missing_scope: errorExample('missing_scope', 'This key lacks the payments scope.') },
        },
      },
    },
  },
  404: {
    name: 'NotFound',
    response: {
      description:
        'Nothing with this id exists in the caller’s space (another space’s records are not found).',
      content: {
        'application/json': {
          schema: errorRef,
          examples: { not_found: errorExample('not_found', 'No such record in this space.') },
        },
      },
    },
  },
  409: {
    name: 'Conflict',
    response: {
      description:
        'The record is in a state that refuses this, or a request with the same Idempotency-Key is still running (retry after Retry-After).',
      headers: {
        'Retry-After': {
          description: 'Seconds to wait before retrying, when the conflict is a request still in flight.',
          schema: { type: 'integer', minimum: 0 },
        },
      },
      content: {
        'application/json': {
          schema: errorRef,
          examples: {
            idempotency_in_progress: errorExample(
              'idempotency_in_progress',
              'A request with this Idempotency-Key is still running.',
            ),
          },
        },
      },
    },
  },
  413: {
    name: 'PayloadTooLarge',
    response: {
      description: 'The body is larger than 1 MiB.',
      content: {
        'application/json': {
          schema: errorRef,
          examples: {
            payload_too_large: errorExample('payload_too_large', 'The body is larger than 1 MiB.'),
          },
        },
      },
    },
  },
  415: {
    name: 'UnsupportedMediaType',
    response: {
      description: 'The body is not sent as application/json.',
      content: {
        'application/json': {
          schema: errorRef,
          examples: {
            unsupported_media_type: errorExample(
              'unsupported_media_type',
              'Send the body as application/json.',
            ),
          },
        },
      },
    },
  },
  422: {
    name: 'UnprocessableEntity',
    response: {
      description:
        'The request breaks a rule: either the schema (a list of problems, each with loc, msg and type) or a business rule (a stable code).',
      content: {
        'application/json': {
          schema: { oneOf: [validationRef, errorRef] },
          examples: {
            validation: {
              value: {
                detail: [{ loc: ['body', 'amount'], msg: 'must be a positive amount', type: 'value_error' }],
              },
            },
            rule: errorExample('currency_mismatch', 'The account holds USD, not EUR.'),
          },
        },
      },
    },
  },
  429: {
    name: 'TooManyRequests',
    response: {
      description: 'The caller made too many calls in the last minute.',
      headers: {
        'Retry-After': {
          description: 'Seconds to wait before the next call is admitted.',
          schema: { type: 'integer', minimum: 1 },
        },
        ...rateHeaders,
      },
      content: {
        'application/json': {
          schema: errorRef,
          examples: { rate_limited: errorExample('rate_limited', 'Too many calls; retry after 12 seconds.') },
        },
      },
    },
  },
  502: {
    name: 'BadGateway',
    response: {
      description:
        'A peer this call needed refused it or could not be reached (the chain, the mail server, Telegram, the card processor); nothing was spent or booked, and details say what the peer answered.',
      content: {
        'application/json': {
          schema: errorRef,
          examples: {
            transfer_failed: errorExample(
              'transfer_failed',
              'The chain refused the transfer; nothing was spent.',
            ),
            delivery_failed: errorExample(
              'delivery_failed',
              'The mail server refused the message: 550 mailbox unavailable',
            ),
          },
        },
      },
    },
  },
  503: {
    name: 'ServiceUnavailable',
    response: {
      description: 'A part of the server this route needs is not configured here (the chat bot).',
      content: {
        'application/json': {
          schema: errorRef,
          examples: {
            chat_unavailable: errorExample(
              'chat_unavailable',
              'The chat bot is not enabled on this server (TELEGRAM_BOT_TOKEN).',
            ),
          },
        },
      },
    },
  },
};

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Every operation of a document, with its method and path. */
export function listOperations(document: Json): { method: string; path: string; operation: Json }[] {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>;
  return Object.entries(paths).flatMap(([path, item]) =>
    HTTP_METHODS.flatMap((method) => {
      const operation = item[method];
      return operation === undefined ? [] : [{ method, path, operation }];
    }),
  );
}

/** Replaces each operation's `x-errors` with references to the shared error responses. */
function attachErrorResponses(document: Json): void {
  const used = new Set<ErrorStatus>();
  for (const { operation } of listOperations(document)) {
    const statuses = (operation[ERRORS_KEY] ?? []) as ErrorStatus[];
    delete operation[ERRORS_KEY];
    const responses = (operation.responses ?? {}) as Json;
    for (const status of statuses) {
      // A route's own, more precise answer for a status wins over the shared one.
      if (responses[String(status)] !== undefined) continue;
      responses[String(status)] = { $ref: `#/components/responses/${ERROR_RESPONSES[status].name}` };
      used.add(status);
    }
    operation.responses = responses;
  }
  const components = (document.components ?? {}) as Json;
  const shared = (components.responses ?? {}) as Json;
  for (const status of [...used].sort())
    shared[ERROR_RESPONSES[status].name] = ERROR_RESPONSES[status].response;
  components.responses = shared;
  document.components = components;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Moves every schema that carries a `title` into `components.schemas` under that title and
 * leaves a reference in its place, so generated clients get the spec's shape names
 * (ChargeCreate, InvoiceOut, …). Two different schemas under one title are a bug: refused.
 */
const SCHEMA_REF = '#/components/schemas/';

function nameTitledSchemas(document: Json): void {
  const components = (document.components ?? {}) as Json;
  const named = (components.schemas ?? {}) as Json;
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!isObject(node)) return node;
    const copy: Json = {};
    for (const [key, value] of Object.entries(node)) copy[key] = visit(value);
    // TypeBox schemas named with $id (the spec's shape names) are named by it too.
    const title = typeof copy.$id === 'string' ? copy.$id : copy.title;
    if (typeof title !== 'string' || !/^[A-Z][A-Za-z0-9]+$/.test(title)) return copy;
    delete copy.$id;
    copy.title = title;
    const existing = named[title];
    // The same schema can reach the document twice in two spellings: with a nested named shape
    // as a reference, or inlined (the swagger plugin drops a nested $id on some routes). The two
    // are one shape when they agree with every reference written out and names set aside.
    if (existing !== undefined && JSON.stringify(spelledOut(existing)) !== JSON.stringify(spelledOut(copy))) {
      throw new Error(`Two different schemas are both titled ${title}; give one of them another name.`);
    }
    // Of two spellings, keep the one that refers to named shapes most (the shorter).
    if (existing === undefined || JSON.stringify(copy).length < JSON.stringify(existing).length)
      named[title] = copy;
    return { $ref: `#/components/schemas/${title}` };
  };
  const spelledOut = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(spelledOut);
    if (!isObject(node)) return node;
    const ref = node.$ref;
    if (typeof ref === 'string' && ref.startsWith(SCHEMA_REF))
      return spelledOut(named[ref.slice(SCHEMA_REF.length)]);
    const out: Json = {};
    for (const [key, value] of Object.entries(node))
      if (key !== 'title' && key !== '$id') out[key] = spelledOut(value);
    return out;
  };
  // Schemas @fastify/swagger already lifted into components (by their $id) get the same pass
  // below their top, so a titled schema inside them is a reference there too.
  for (const [name, schema] of Object.entries(named)) {
    if (!isObject(schema)) continue;
    named[name] = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, visit(value)]));
  }
  for (const key of ['paths', 'webhooks'] as const) {
    if (document[key] !== undefined) document[key] = visit(document[key]);
  }
  components.schemas = Object.fromEntries(Object.entries(named).sort(([a], [b]) => a.localeCompare(b)));
  document.components = components;
}

/** An example for one operation: its request body, and the body of one answer. */
export type OperationExample = {
  request?: unknown;
  response?: { status: number; body: unknown };
};

function attachExamples(document: Json, examples: Record<string, OperationExample>): void {
  for (const { operation } of listOperations(document)) {
    const example = examples[String(operation.operationId)];
    if (example === undefined) continue;
    const requestMedia = ((operation.requestBody as Json | undefined)?.content as Json | undefined)?.[
      'application/json'
    ] as Json | undefined;
    if (example.request !== undefined && requestMedia) requestMedia.example = example.request;
    if (example.response === undefined) continue;
    const answer = (operation.responses as Json)[String(example.response.status)] as Json | undefined;
    const media = (answer?.content as Json | undefined)?.['application/json'] as Json | undefined;
    if (media) media.example = example.response.body;
  }
}

export type DocumentExtras = {
  examples: Record<string, OperationExample>;
  /** Path items no route schema can describe (answers Fastify must not reshape). */
  paths: Json;
  webhooks: Json;
  tags: { name: string; description: string }[];
};

/** The last pass over the document @fastify/swagger built from the routes (its transformObject). */
/** @fastify/swagger calls every answer without a description "Default Response": say what it is. */
function describeSuccesses(document: Json): void {
  for (const { operation } of listOperations(document)) {
    for (const [status, answer] of Object.entries((operation.responses ?? {}) as Record<string, Json>)) {
      if (answer.description !== 'Default Response') continue;
      const media = (answer.content as Record<string, { schema?: Json }> | undefined)?.['application/json'];
      const title = typeof media?.schema?.title === 'string' ? media.schema.title : undefined;
      const what = status === '201' ? 'Created' : status === '204' ? 'Done; no body' : 'OK';
      answer.description = title ? `${what}: the ${title}.` : `${what}.`;
    }
  }
}

/** Finishes the generated document in place (paths, responses, webhooks, examples, tags) and answers it. */
export function finishDocument<D extends object>(generated: D, extras: DocumentExtras): D {
  // The generated document is plain JSON, edited as such.
  const document = generated as Json;
  document.paths = { ...(document.paths as Json), ...structuredClone(extras.paths) };
  describeSuccesses(document);
  attachErrorResponses(document);
  document.webhooks = structuredClone(extras.webhooks);
  nameTitledSchemas(document);
  attachExamples(document, extras.examples);
  document.tags = extras.tags;
  return generated;
}
