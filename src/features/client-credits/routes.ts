import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../platform/db/database.ts';
import { APP_READ_ERRORS, APP_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { Amount, Text, Type } from '../../platform/http/schema-kit.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
import { adjustCredit, listClientCredits, nameContact, parseSignedAmount } from './service.ts';

const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const CreditParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  client_ref: Text({ minLength: 1, maxLength: 120 }),
});
const ClientCreditOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  client_ref: Type.String(),
  currency: Type.String(),
  balance: Type.String({ description: 'Eight decimals.' }),
  contact_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  contact_name: Type.Union([Type.String(), Type.Null()]),
  label: Type.String({ description: 'The contact name once named, else the client_ref.' }),
  last_call_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  top_ups: Type.Integer({ description: 'Payments that topped the credit up.' }),
  balance_url: Type.String({ description: "The client's public balance page." }),
  created_at: Type.String({ format: 'date-time' }),
});

export const CreditListQuery = Type.Object({
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});
export const NameContactIn = Type.Object({ contact_id: Type.String({ format: 'uuid' }) });
export const AdjustmentIn = Type.Object({
  amount: Amount('signed', {
    description: 'Above zero grants credit, below zero takes it back; a JSON number or a decimal string.',
  }),
  reason: Text({ minLength: 1, maxLength: 500, description: 'Why: shown in the client’s history.' }),
  refund: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'The credit is paid back to the client (amount below zero).',
    }),
  ),
});

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  listClientCredits: routeDoc({
    operationId: 'listClientCredits',
    summary: 'List client credits',
    description:
      'Lists every client_ref of the space with its prepaid balance and linked contact. Any member may read.',
    tags: ['Client credits'],
    errors: APP_READ_ERRORS,
  }),
  linkClientCreditContact: routeDoc({
    operationId: 'linkClientCreditContact',
    summary: 'Link a client credit to a contact',
    description:
      "Ties a client_ref's prepaid balance to a contact of the same space. Owners and admins only; the contact must exist in the space.",
    tags: ['Client credits'],
    errors: APP_WRITE_ERRORS,
  }),
  adjustClientCredit: routeDoc({
    operationId: 'adjustClientCredit',
    summary: 'Grant, adjust or refund a client credit',
    description:
      "Owners and admins change a client's prepaid credit by hand with a reason: a positive amount grants credit, a negative one takes it back, and a negative one with refund true pays it back to the client. Each is booked as a balanced ledger entry and listed in the client's history. The credit never goes below zero (422 insufficient_balance).",
    tags: ['Client credits'],
    errors: APP_WRITE_ERRORS,
  }),
};

export function registerClientCreditRoutes(
  server: FastifyInstance,
  deps: { db: Db; clock: Clock; publicUrl: string },
) {
  const app = typedRoutes(server);
  app.get(
    '/app/api/spaces/:id/client-credits',
    {
      schema: {
        ...docs.listClientCredits,
        params: SpaceParams,
        querystring: CreditListQuery,
        response: {
          200: Type.Object({
            items: Type.Array(ClientCreditOut),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      return listClientCredits(deps, requireCaller(request).userId, id, request.query);
    },
  );
  app.post(
    '/app/api/spaces/:id/client-credits/:client_ref/contact',
    {
      schema: {
        ...docs.linkClientCreditContact,
        params: CreditParams,
        body: NameContactIn,
        response: { 200: ClientCreditOut },
      },
    },
    async (request) => {
      const { id, client_ref } = request.params;
      const { contact_id } = request.body;
      return nameContact(deps, requireCaller(request).userId, id, client_ref, contact_id);
    },
  );
  app.post(
    '/app/api/spaces/:id/client-credits/:client_ref/adjustments',
    {
      schema: {
        ...docs.adjustClientCredit,
        params: CreditParams,
        body: AdjustmentIn,
        response: { 201: ClientCreditOut },
      },
    },
    async (request, reply) => {
      const { id, client_ref } = request.params;
      const { amount, reason, refund } = request.body;
      const adjusted = await adjustCredit(deps, requireCaller(request).userId, id, client_ref, {
        amount: parseSignedAmount(amount),
        reason,
        refund: refund ?? false,
      });
      return reply.code(201).send(adjusted);
    },
  );
}
