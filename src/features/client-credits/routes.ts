import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../platform/db/database.ts';
import { APP_READ_ERRORS, APP_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { type Static, Text, Type } from '../../platform/http/schema-kit.ts';
import { listClientCredits, nameContact } from './service.ts';

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
  created_at: Type.String({ format: 'date-time' }),
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
};

export function registerClientCreditRoutes(app: FastifyInstance, deps: { db: Db; clock: Clock }) {
  app.get(
    '/app/api/spaces/:id/client-credits',
    {
      schema: {
        ...docs.listClientCredits,

        params: SpaceParams,
        response: { 200: Type.Object({ items: Type.Array(ClientCreditOut) }) },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      return { items: await listClientCredits(deps, request.session!.userId, id) };
    },
  );
  app.post(
    '/app/api/spaces/:id/client-credits/:client_ref/contact',
    {
      schema: {
        ...docs.linkClientCreditContact,

        params: CreditParams,
        body: Type.Object({ contact_id: Type.String({ format: 'uuid' }) }),
        response: { 200: ClientCreditOut },
      },
    },
    async (request) => {
      const { id, client_ref } = request.params as Static<typeof CreditParams>;
      const { contact_id } = request.body as { contact_id: string };
      return nameContact(deps, request.session!.userId, id, client_ref, contact_id);
    },
  );
}
