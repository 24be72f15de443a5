import type { FastifyInstance } from 'fastify';
import { APP_READ_ERRORS, APP_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { type Static, Text, Type } from '../../platform/http/schema-kit.ts';
import { listEndpoints, type ResourcesDeps, updateEndpoint } from './service.ts';

const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const CardParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  resource_id: Type.String({ format: 'uuid' }),
});
const CardPatch = Type.Object(
  {
    name: Type.Optional(
      Text({ maxLength: 200, description: 'Shown on the card and, when Findable, in discovery.' }),
    ),
    findable: Type.Optional(
      Type.Boolean({ description: 'List address and name in the public x402 discovery list.' }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
const CardOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  address: Type.String(),
  name: Type.String(),
  findable: Type.Boolean(),
  call_count: Type.Integer({ description: 'Payments settled for it plus prepaid charges for it.' }),
  last_payment_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  payers_per_day: Type.Array(Type.Object({ date: Type.String(), payers: Type.Integer() }), {
    description: 'The last 30 UTC days, oldest first: distinct paying addresses and clients.',
  }),
  created_at: Type.String({ format: 'date-time' }),
});
const CardList = Type.Object({ items: Type.Array(CardOut) });

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
  updateEndpoint: routeDoc({
    operationId: 'updateEndpoint',
    summary: 'Update an endpoint card',
    description:
      'Renames a card or marks it Findable, which lists its address and name (never volumes) in the public x402 discovery list. Owners and admins only.',
    tags: ['Endpoints'],
    errors: APP_WRITE_ERRORS,
  }),
};

/** The Endpoints screen: a card per resource a payment or charge was filed under. */
export function registerEndpointAppRoutes(app: FastifyInstance, deps: ResourcesDeps) {
  app.get(
    '/app/api/spaces/:id/endpoints',
    {
      schema: {
        ...docs.listEndpoints,
        params: SpaceParams,
        response: { 200: CardList },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      return listEndpoints(deps, request.session!.userId, id);
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
      const { id, resource_id } = request.params as Static<typeof CardParams>;
      return updateEndpoint(
        deps,
        request.session!.userId,
        id,
        resource_id,
        request.body as Static<typeof CardPatch>,
      );
    },
  );
}
