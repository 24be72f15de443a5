import type { FastifyInstance } from 'fastify';
import {
  APP_READ_ERRORS,
  APP_WRITE_ERRORS,
  INTEGRATION_WRITE_ERRORS,
  routeDoc,
} from '../../platform/http/openapi.ts';
import { Type } from '../../platform/http/schema-kit.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
import { runWrite } from '../../platform/http/write.ts';
import { BatchPage, PushIn, PushOut, RejectionsOut, UndoOut } from './schemas.ts';
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
    description:
      "Lists the space's pushed batches with their counts, newest first, 50 a page: pass next_cursor back as cursor for the next page. Owners and admins only.",
    tags: ['Push'],
    errors: APP_READ_ERRORS,
  }),
  listPushBatchRejections: routeDoc({
    operationId: 'listPushBatchRejections',
    summary: 'Read the rows a pushed batch refused',
    description:
      "A batch with each row it refused: the row's index in the pushed array, its external_id (null when that field was what was wrong), the error code (invalid_row, currency_mismatch or allowance_exceeded) and the sentence answered at push time. At most 500 rows (a batch's limit), in pushed order. Owners and admins only.",
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

export function registerPushRoutes(server: FastifyInstance, deps: service.PushDeps) {
  const app = typedRoutes(server);
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
        service.pushRows(tx, deps, requireCaller(request, 'integration'), request.body),
      ),
  );
}

const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const BatchParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  batch_id: Type.String({ format: 'uuid' }),
});
export const BatchQuery = Type.Object({
  push_source: Type.Optional(Type.String({ minLength: 1, maxLength: 80 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});

export function registerPushAppRoutes(server: FastifyInstance, deps: service.PushDeps) {
  const app = typedRoutes(server);
  app.get(
    '/app/api/spaces/:id/push-batches',
    {
      schema: {
        ...docs.listPushBatches,
        params: SpaceParams,
        querystring: BatchQuery,
        response: { 200: BatchPage },
      },
    },
    async (request) => {
      const { id } = request.params;
      return service.listBatches(deps, requireCaller(request).userId, id, request.query);
    },
  );
  app.get(
    '/app/api/spaces/:id/push-batches/:batch_id/rejections',
    {
      schema: {
        ...docs.listPushBatchRejections,
        params: BatchParams,
        response: { 200: RejectionsOut },
      },
    },
    async (request) => {
      const { id, batch_id } = request.params;
      return service.batchRejections(deps, requireCaller(request).userId, id, batch_id);
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
      const { id, batch_id } = request.params;
      return service.undoBatch(deps, requireCaller(request).userId, id, batch_id);
    },
  );
}
