import type { FastifyInstance } from 'fastify';
import {
  APP_READ_ERRORS,
  APP_WRITE_ERRORS,
  INTEGRATION_WRITE_ERRORS,
  routeDoc,
} from '../../platform/http/openapi.ts';
import { type Static, Type } from '../../platform/http/schema-kit.ts';
import { runWrite } from '../../platform/http/write.ts';
import { BatchOut, PushIn, PushOut, UndoOut } from './schemas.ts';
import * as service from './service.ts';

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  pushTransactions: routeDoc({
    operationId: 'pushTransactions',
    summary: 'Push rows from another system as one batch',
    description:
      'Books up to 500 rows from another system in one batch, filed with origin import. Needs the transactions scope. A row whose external_id was already pushed is counted as a duplicate and booked once; a row dated in a closed period is skipped; unknown account keys create accounts. The batch can be undone in the app.',
    tags: ['Push'],
    errors: INTEGRATION_WRITE_ERRORS,
  }),
  listPushBatches: routeDoc({
    operationId: 'listPushBatches',
    summary: 'List pushed batches',
    description: "Lists the space's pushed batches with their counts, newest first. Any member may read.",
    tags: ['Push'],
    errors: APP_READ_ERRORS,
  }),
  undoPushBatch: routeDoc({
    operationId: 'undoPushBatch',
    summary: 'Undo a pushed batch',
    description:
      'Reverses every row of a batch with new entries (nothing is edited). Owners and admins only; a batch is undone once, and not when its rows fall in a closed period.',
    tags: ['Push'],
    errors: APP_WRITE_ERRORS,
  }),
};

export function registerPushRoutes(app: FastifyInstance, deps: service.PushDeps) {
  app.post(
    '/integration/transactions',
    {
      config: { scope: 'transactions', idempotent: true },
      schema: {
        ...docs.pushTransactions,
        body: PushIn,
        response: { 200: PushOut },
      },
    },
    (request, reply) =>
      runWrite(deps, request, reply, 200, (tx) =>
        service.pushRows(tx, deps, request.integration!, request.body as service.PushInput),
      ),
  );
}

const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const BatchParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  batch_id: Type.String({ format: 'uuid' }),
});
const BatchQuery = Type.Object({ push_source: Type.Optional(Type.String({ minLength: 1, maxLength: 80 })) });

export function registerPushAppRoutes(app: FastifyInstance, deps: service.PushDeps) {
  app.get(
    '/app/api/spaces/:id/push-batches',
    {
      schema: {
        ...docs.listPushBatches,

        params: SpaceParams,
        querystring: BatchQuery,
        response: { 200: Type.Object({ items: Type.Array(BatchOut) }) },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      const { push_source } = request.query as Static<typeof BatchQuery>;
      return { items: await service.listBatches(deps, request.session!.userId, id, push_source) };
    },
  );
  app.post(
    '/app/api/spaces/:id/push-batches/:batch_id/undo',
    {
      schema: {
        ...docs.undoPushBatch,
        params: BatchParams,
        response: { 200: UndoOut },
      },
    },
    async (request) => {
      const { id, batch_id } = request.params as Static<typeof BatchParams>;
      return service.undoBatch(deps, request.session!.userId, id, batch_id);
    },
  );
}
