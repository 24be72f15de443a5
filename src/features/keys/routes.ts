import type { FastifyInstance } from 'fastify';
import {
  APP_READ_ERRORS,
  APP_WRITE_ERRORS,
  INTEGRATION_READ_ERRORS,
  routeDoc,
} from '../../platform/http/openapi.ts';
import { Type } from '../../platform/http/schema-kit.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
import { KeyIssue, KeyIssued, KeyList, KeyListQuery, KeyOut, KeyParams, PingOut } from './schemas.ts';
import * as service from './service.ts';

const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  issueKey: routeDoc({
    operationId: 'issueKey',
    summary: 'Issue an integration key',
    description:
      'Issues an oit_ key with the chosen scopes and an optional webhook address. Owners and admins only. The key and its webhook secret are in this answer only; the server keeps a hash of the key and an encrypted copy of the secret.',
    tags: ['Keys'],
    errors: APP_WRITE_ERRORS,
  }),
  listKeys: routeDoc({
    operationId: 'listKeys',
    summary: 'List integration keys',
    description:
      "Lists the space's keys (revoked and expired ones too) by name, prefix, scopes and state, newest first, 50 a page; never the key or its secret. Owners and admins only.",
    tags: ['Keys'],
    errors: APP_READ_ERRORS,
  }),
  revokeKey: routeDoc({
    operationId: 'revokeKey',
    summary: 'Revoke an integration key',
    description:
      'Revokes a key at once: its next call answers 401. Owners and admins only. Revoking twice answers the revoked key again.',
    tags: ['Keys'],
    errors: APP_READ_ERRORS,
  }),
  ping: routeDoc({
    operationId: 'ping',
    summary: 'Check a key',
    description:
      "Answers the key's space and scopes. Any valid key may call it; use it to test a key before going live.",
    tags: ['Ping'],
    errors: INTEGRATION_READ_ERRORS,
  }),
};

export function registerKeyRoutes(server: FastifyInstance, deps: service.KeysDeps) {
  const app = typedRoutes(server);
  app.post(
    '/app/api/spaces/:id/keys',
    {
      schema: {
        ...docs.issueKey,
        params: SpaceParams,
        body: KeyIssue,
        response: { 201: KeyIssued },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const issued = await service.issueKey(deps, requireCaller(request).userId, id, request.body);
      return reply.code(201).header('cache-control', 'no-store').send(issued);
    },
  );
  app.get(
    '/app/api/spaces/:id/keys',
    {
      schema: {
        ...docs.listKeys,
        params: SpaceParams,
        querystring: KeyListQuery,
        response: { 200: KeyList },
      },
    },
    async (request) => {
      const { id } = request.params;
      return service.listKeys(deps, requireCaller(request).userId, id, request.query);
    },
  );
  app.delete(
    '/app/api/spaces/:id/keys/:key_id',
    {
      schema: {
        ...docs.revokeKey,
        params: KeyParams,
        response: { 200: KeyOut },
      },
    },
    async (request) => {
      const { id, key_id } = request.params;
      return service.revokeKey(deps, requireCaller(request).userId, id, key_id);
    },
  );
}

export function registerPingRoute(server: FastifyInstance) {
  const app = typedRoutes(server);
  app.get(
    '/integration/ping',
    {
      config: { scope: 'any' },
      schema: {
        ...docs.ping,
        response: { 200: PingOut },
      },
    },
    async (request) => ({
      space_id: requireCaller(request, 'integration').spaceId,
      scopes: requireCaller(request, 'integration').scopes,
    }),
  );
}
