import type { FastifyInstance } from 'fastify';
import { integrationRefusals, type Static, Type } from '../../platform/http/schema-kit.ts';
import { KeyIssue, KeyIssued, KeyList, KeyOut, KeyParams, PingOut } from './schemas.ts';
import * as service from './service.ts';

const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export function registerKeyRoutes(app: FastifyInstance, deps: service.KeysDeps) {
  const tags = ['app'];
  app.post(
    '/app/api/spaces/:id/keys',
    { schema: { tags, params: SpaceParams, body: KeyIssue, response: { 201: KeyIssued } } },
    async (request, reply) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      const issued = await service.issueKey(
        deps,
        request.session!.userId,
        id,
        request.body as service.KeyIssueInput,
      );
      return reply.code(201).header('cache-control', 'no-store').send(issued);
    },
  );
  app.get(
    '/app/api/spaces/:id/keys',
    { schema: { tags, params: SpaceParams, response: { 200: KeyList } } },
    async (request) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      return { items: await service.listKeys(deps, request.session!.userId, id) };
    },
  );
  app.delete(
    '/app/api/spaces/:id/keys/:key_id',
    { schema: { tags, params: KeyParams, response: { 200: KeyOut } } },
    async (request) => {
      const { id, key_id } = request.params as Static<typeof KeyParams>;
      return service.revokeKey(deps, request.session!.userId, id, key_id);
    },
  );
}

export function registerPingRoute(app: FastifyInstance) {
  app.get(
    '/integration/ping',
    {
      config: { scope: 'any' },
      schema: {
        tags: ['integration'],
        summary: 'Check a key',
        response: { 200: PingOut, ...integrationRefusals },
      },
    },
    async (request) => ({ space_id: request.integration!.spaceId, scopes: request.integration!.scopes }),
  );
}
