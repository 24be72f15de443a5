import type { FastifyInstance } from 'fastify';
import type { Static } from '../../platform/http/schema-kit.ts';
import { Type } from '../../platform/http/schema-kit.ts';
import {
  MemberAdd,
  MemberList,
  MemberOut,
  MemberParams,
  MemberPatch,
  SpaceCreate,
  SpaceList,
  SpaceOut,
  SpaceParams,
  SpacePatch,
} from './schemas.ts';
import * as service from './service.ts';

const tags = ['app'];

export function registerSpaceRoutes(app: FastifyInstance, deps: service.SpacesDeps) {
  app.post(
    '/app/api/spaces',
    { schema: { tags, body: SpaceCreate, response: { 201: SpaceOut } } },
    async (request, reply) => {
      const body = request.body as Static<typeof SpaceCreate>;
      return reply.code(201).send(await service.createSpace(deps, request.session!.userId, body));
    },
  );
  app.get('/app/api/spaces', { schema: { tags, response: { 200: SpaceList } } }, async (request) => ({
    items: await service.listSpaces(deps, request.session!.userId),
  }));
  app.get(
    '/app/api/spaces/:id',
    { schema: { tags, params: SpaceParams, response: { 200: SpaceOut } } },
    async (request) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      return service.getSpace(deps, request.session!.userId, id);
    },
  );
  app.patch(
    '/app/api/spaces/:id',
    { schema: { tags, params: SpaceParams, body: SpacePatch, response: { 200: SpaceOut } } },
    async (request) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      return service.updateSpace(
        deps,
        request.session!.userId,
        id,
        request.body as Static<typeof SpacePatch>,
      );
    },
  );
  app.post(
    '/app/api/spaces/:id/close-period',
    {
      schema: {
        tags,
        params: SpaceParams,
        body: Type.Object({
          through: Type.String({ format: 'date', description: 'The last day of the closed books.' }),
        }),
        response: {
          200: Type.Object({
            space_id: Type.String({ format: 'uuid' }),
            closed_through: Type.String({ format: 'date' }),
          }),
        },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      return service.closePeriod(
        deps,
        request.session!.userId,
        id,
        (request.body as { through: string }).through,
      );
    },
  );
  registerMemberRoutes(app, deps);
}

function registerMemberRoutes(app: FastifyInstance, deps: service.SpacesDeps) {
  app.get(
    '/app/api/spaces/:id/members',
    { schema: { tags, params: SpaceParams, response: { 200: MemberList } } },
    async (request) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      return { items: await service.listMembers(deps, request.session!.userId, id) };
    },
  );
  app.post(
    '/app/api/spaces/:id/members',
    { schema: { tags, params: SpaceParams, body: MemberAdd, response: { 201: MemberOut } } },
    async (request, reply) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      const member = await service.addMember(
        deps,
        request.session!.userId,
        id,
        request.body as Static<typeof MemberAdd>,
      );
      return reply.code(201).send(member);
    },
  );
  app.patch(
    '/app/api/spaces/:id/members/:user_id',
    { schema: { tags, params: MemberParams, body: MemberPatch, response: { 200: MemberOut } } },
    async (request) => {
      const { id, user_id } = request.params as Static<typeof MemberParams>;
      const { role } = request.body as Static<typeof MemberPatch>;
      return service.changeRole(deps, request.session!.userId, id, user_id, role);
    },
  );
  app.delete(
    '/app/api/spaces/:id/members/:user_id',
    { schema: { tags, params: MemberParams, response: { 200: Type.Object({ removed: Type.Boolean() }) } } },
    async (request) => {
      const { id, user_id } = request.params as Static<typeof MemberParams>;
      await service.removeMember(deps, request.session!.userId, id, user_id);
      return { removed: true };
    },
  );
}
