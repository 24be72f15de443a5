import type { FastifyInstance } from 'fastify';
import { integrationRefusals, type Static, Type } from '../../platform/http/schema-kit.ts';
import { runWrite } from '../../platform/http/write.ts';
import { BatchOut, PushIn, PushOut, UndoOut } from './schemas.ts';
import * as service from './service.ts';

export function registerPushRoutes(app: FastifyInstance, deps: service.PushDeps) {
  app.post(
    '/integration/transactions',
    {
      config: { scope: 'transactions', idempotent: true },
      schema: {
        tags: ['integration'],
        summary: 'Push rows from another system as one batch',
        body: PushIn,
        response: { 200: PushOut, ...integrationRefusals },
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
        tags: ['app'],
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
    { schema: { tags: ['app'], params: BatchParams, response: { 200: UndoOut } } },
    async (request) => {
      const { id, batch_id } = request.params as Static<typeof BatchParams>;
      return service.undoBatch(deps, request.session!.userId, id, batch_id);
    },
  );
}
