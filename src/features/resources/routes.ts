import type { FastifyInstance } from 'fastify';
import { APP_READ_ERRORS, APP_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { CursorPage, CursorParam, DateOnly, Text, Type } from '../../platform/http/schema-kit.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
import {
  listEndpoints,
  listIncome,
  listIncomePayments,
  type ResourcesDeps,
  updateEndpoint,
  updateEndpointByKey,
} from './service.ts';

const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const CardParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  resource_id: Type.String({ format: 'uuid' }),
});
const HttpMethodIn = Type.Union([
  Type.Literal('GET'),
  Type.Literal('HEAD'),
  Type.Literal('DELETE'),
  Type.Literal('POST'),
  Type.Literal('PUT'),
  Type.Literal('PATCH'),
]);
// A JSON Schema object, checked further by the bazaar extension's validator.
const JsonSchemaIn = Type.Record(Type.String(), Type.Unknown(), { maxProperties: 50 });
const CardPatch = Type.Object(
  {
    name: Type.Optional(
      Text({ maxLength: 200, description: 'Shown on the card and, when Findable, in discovery.' }),
    ),
    findable: Type.Optional(
      Type.Boolean({ description: 'List address and name in the public x402 discovery list.' }),
    ),
    description: Type.Optional(
      Text({ maxLength: 1000, description: 'What the endpoint does, for x402 clients (the bazaar list).' }),
    ),
    http_method: Type.Optional(
      Type.Union([HttpMethodIn, Type.Null()], {
        description: 'The HTTP method a client calls it with; null clears the bazaar description.',
      }),
    ),
    input_schema: Type.Optional(
      Type.Union([JsonSchemaIn, Type.Null()], {
        description:
          'A JSON Schema of its input (query parameters, or the JSON body of POST, PUT and PATCH); null clears it.',
      }),
    ),
    input_example: Type.Optional(
      Type.Union([JsonSchemaIn, Type.Null()], {
        description:
          'An example input that fits input_schema (the bazaar validator checks it); null clears it.',
      }),
    ),
    output_schema: Type.Optional(
      Type.Union([JsonSchemaIn, Type.Null()], {
        description: 'A JSON Schema of its answer; null clears it.',
      }),
    ),
    output_example: Type.Optional(
      Type.Union([JsonSchemaIn, Type.Null()], {
        description:
          'An example answer that fits output_schema; the bazaar list shows the output only with one. Null clears it.',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
const CardOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  address: Type.String(),
  name: Type.String(),
  findable: Type.Boolean(),
  description: Type.String(),
  http_method: Type.Union([HttpMethodIn, Type.Null()]),
  input_schema: Type.Union([JsonSchemaIn, Type.Null()]),
  input_example: Type.Union([JsonSchemaIn, Type.Null()]),
  output_schema: Type.Union([JsonSchemaIn, Type.Null()]),
  output_example: Type.Union([JsonSchemaIn, Type.Null()]),
  call_count: Type.Integer({ description: 'Payments settled for it plus prepaid charges for it.' }),
  last_payment_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  payers_per_day: Type.Array(Type.Object({ date: Type.String(), payers: Type.Integer() }), {
    description: 'The last 30 UTC days, oldest first: distinct paying addresses and clients.',
  }),
  created_at: Type.String({ format: 'date-time' }),
});
const CardList = CursorPage(CardOut);
export const CardListQuery = Type.Object({ cursor: CursorParam });

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  listEndpoints: routeDoc({
    operationId: 'listEndpoints',
    summary: 'List endpoint cards',
    description:
      'Lists the resources paid calls were filed under: address, call count, last payment and payers per day. Any member may read.',
    tags: ['Endpoints'],
    errors: APP_READ_ERRORS,
  }),
  updateEndpointByKey: routeDoc({
    operationId: 'updateEndpointByKey',
    summary: 'Describe an endpoint card',
    description:
      "Renames the key's space's card, marks it Findable, or describes it for x402 clients in the bazaar form (HTTP method, JSON Schemas and examples of input and output), checked by the bazaar extension. The same fields as the app's endpoint update.",
    tags: ['Endpoints'],
    errors: [401, 403, 404, 422, 429],
  }),
  updateEndpoint: routeDoc({
    operationId: 'updateEndpoint',
    summary: 'Update an endpoint card',
    description:
      'Renames a card, marks it Findable (its address, name and description, never volumes, in the public x402 discovery list), or describes it for x402 clients in the bazaar form: HTTP method and JSON Schemas of input and output, checked by the bazaar extension. Owners and admins only.',
    tags: ['Endpoints'],
    errors: APP_WRITE_ERRORS,
  }),
};

const KeyCardParams = Type.Object({ resource_id: Type.String({ format: 'uuid' }) });

/** PATCH /integration/endpoints/{resource_id}: a seller's own code describes its cards. */
export function registerEndpointIntegrationRoutes(server: FastifyInstance, deps: ResourcesDeps) {
  const app = typedRoutes(server);
  app.patch(
    '/integration/endpoints/:resource_id',
    {
      config: { scope: 'payments' },
      schema: {
        ...docs.updateEndpointByKey,
        params: KeyCardParams,
        body: CardPatch,
        response: { 200: CardOut },
      },
    },
    async (request) =>
      updateEndpointByKey(
        deps,
        requireCaller(request, 'integration'),
        request.params.resource_id,
        request.body,
      ),
  );
}

/** The Endpoints screen: a card per resource a payment or charge was filed under. */
export function registerEndpointAppRoutes(server: FastifyInstance, deps: ResourcesDeps) {
  const app = typedRoutes(server);
  app.get(
    '/app/api/spaces/:id/endpoints',
    {
      schema: {
        ...docs.listEndpoints,
        params: SpaceParams,
        querystring: CardListQuery,
        response: { 200: CardList },
      },
    },
    async (request) => {
      const { id } = request.params;
      return listEndpoints(deps, requireCaller(request).userId, id, request.query);
    },
  );
  app.patch(
    '/app/api/spaces/:id/endpoints/:resource_id',
    {
      schema: {
        ...docs.updateEndpoint,
        params: CardParams,
        body: CardPatch,
        response: { 200: CardOut },
      },
    },
    async (request) => {
      const { id, resource_id } = request.params;
      return updateEndpoint(deps, requireCaller(request).userId, id, resource_id, request.body);
    },
  );
}

const Page = {
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 400, description: 'next_cursor of the previous page.' }),
  ),
  limit: Type.Optional(Type.String({ pattern: '^(100|[1-9][0-9]?)$', description: '1 to 100; default 50.' })),
};
const IncomeRef = Text({
  minLength: 1,
  maxLength: 200,
  description: 'The income account: a resource id, `general`, or `import:<source>`.',
});
const IncomeQuery = Type.Object({ ...Page, ref: Type.Optional(IncomeRef) }, { additionalProperties: false });
const IncomePaymentsQuery = Type.Object(
  { ...Page, ref: IncomeRef, day: DateOnly(), currency: Type.String({ pattern: '^[A-Z]{3,5}$' }) },
  { additionalProperties: false },
);
const IncomeRowOut = Type.Object({
  ref: Type.String(),
  resource_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  label: Type.String(),
  address: Type.Union([Type.String(), Type.Null()]),
  day: Type.String(),
  currency: Type.String(),
  amount: Type.String({ description: "The day's income: its payments less their reversals." }),
  entries: Type.Integer(),
  listed_senders: Type.Integer({
    description: 'How many of its payments came by direct transfer from a sender on the sanctions list.',
  }),
});
const IncomePaymentOut = Type.Object({
  entry_id: Type.String({ format: 'uuid' }),
  amount: Type.String({ description: 'Negative for a reversal (a reorganisation, an undone batch).' }),
  payer: Type.String(),
  origin: Type.String(),
  cause_type: Type.String(),
  memo: Type.String(),
  reverses_entry_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  listed_sender: Type.Union([Type.Object({ listed: Type.String(), programs: Type.String() }), Type.Null()], {
    description:
      'The sanctions list entry the sender matched, when the payment came by direct transfer from a listed sender (booked, and flagged on the Screening page); null otherwise.',
  }),
  receipt_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description:
      "The signed x402 receipt of this payment (the offer-receipt extension's EIP-712 form), when it came by x402; null otherwise. The page downloads it at /app/books/{id}/income/receipts/{receipt_id}.",
  }),
});
const NextCursor = Type.Union([Type.String(), Type.Null()]);

const pageOf = (query: { cursor?: string; limit?: string }) => ({
  cursor: query.cursor,
  limit: query.limit === undefined ? undefined : Number(query.limit),
});

const incomeDocs = {
  listIncome: routeDoc({
    operationId: 'listIncome',
    summary: 'List income per endpoint per day',
    description:
      'Lists the space’s income to any member: one row per income account (an endpoint’s resource id, general, or import:<source>) per day and currency, newest day first, with the day’s payments less their reversals and how many entries made it. ref keeps one income account. 50 rows a page by default (limit 1 to 100); send next_cursor back as cursor for the next page.',
    tags: ['Ledger'],
    errors: APP_READ_ERRORS,
  }),
  listIncomePayments: routeDoc({
    operationId: 'listIncomePayments',
    summary: 'List the payments under an income row',
    description:
      'Lists the ledger entries behind one income row (ref, day and currency, all required) to any member: each payment with its payer, origin and memo, and each reversal (a reorganisation, an undone batch) as a negative amount naming the entry it reverses. Paged like the rows.',
    tags: ['Ledger'],
    errors: APP_READ_ERRORS,
  }),
};

/** The Income screen: a row per endpoint per day, and the payments under a row. */
export function registerIncomeAppRoutes(server: FastifyInstance, deps: ResourcesDeps) {
  const app = typedRoutes(server);
  app.get(
    '/app/api/spaces/:id/income',
    {
      schema: {
        ...incomeDocs.listIncome,
        params: SpaceParams,
        querystring: IncomeQuery,
        response: { 200: Type.Object({ items: Type.Array(IncomeRowOut), next_cursor: NextCursor }) },
      },
    },
    async (request) => {
      const { id } = request.params;
      const query = request.query;
      return listIncome(deps, requireCaller(request).userId, id, { ...pageOf(query), ref: query.ref });
    },
  );
  app.get(
    '/app/api/spaces/:id/income/payments',
    {
      schema: {
        ...incomeDocs.listIncomePayments,
        params: SpaceParams,
        querystring: IncomePaymentsQuery,
        response: { 200: Type.Object({ items: Type.Array(IncomePaymentOut), next_cursor: NextCursor }) },
      },
    },
    async (request) => {
      const { id } = request.params;
      const query = request.query;
      const row = { ref: query.ref, day: query.day, currency: query.currency };
      return listIncomePayments(deps, requireCaller(request).userId, id, row, pageOf(query));
    },
  );
}
