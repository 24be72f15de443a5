import type { FastifyInstance } from 'fastify';
import { APP_READ_ERRORS, APP_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { Type } from '../../platform/http/schema-kit.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
import * as logo from './logo.ts';
import * as numbering from './numbering.ts';
import * as profile from './profile.ts';
import {
  ListQuery,
  MemberAdd,
  MemberList,
  MemberOut,
  MemberParams,
  MemberPatch,
  NumberingOut,
  NumberingPatch,
  ProfileOut,
  ProfilePatch,
  SpaceCreate,
  SpaceList,
  SpaceOut,
  SpaceParams,
  SpacePatch,
} from './schemas.ts';
import * as service from './service.ts';

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  createSpace: routeDoc({
    operationId: 'createSpace',
    summary: 'Create a space',
    description: 'Creates a space (a set of books) with the caller as its owner.',
    tags: ['Spaces'],
    errors: [401, 413, 415, 422, 429],
  }),
  listSpaces: routeDoc({
    operationId: 'listSpaces',
    summary: 'List spaces',
    description:
      "Lists the spaces the caller is a member of, with the caller's role, newest first, 50 a page.",
    tags: ['Spaces'],
    errors: [401, 429],
  }),
  getSpace: routeDoc({
    operationId: 'getSpace',
    summary: 'Read a space',
    description: 'Reads one space the caller is a member of; others are not found.',
    tags: ['Spaces'],
    errors: APP_READ_ERRORS,
  }),
  updateSpace: routeDoc({
    operationId: 'updateSpace',
    summary: 'Update a space',
    description: "Changes a space's name or settings. Owners and admins only.",
    tags: ['Spaces'],
    errors: APP_WRITE_ERRORS,
  }),
  getProfile: routeDoc({
    operationId: 'getSellerProfile',
    summary: "Read the book's seller profile",
    description:
      'Who the business is on its documents and public pages: names, address, tax ids, contact, payment terms, invoice footer and public handle. Any member reads it.',
    tags: ['Spaces'],
    errors: APP_READ_ERRORS,
  }),
  updateProfile: routeDoc({
    operationId: 'updateSellerProfile',
    summary: "Change the book's seller profile",
    description:
      'Changes the fields given; an address replaces the whole address. A document already sent keeps the seller it was sent with. A new public handle must be free (409 conflict); the old one stops answering. Owners and admins only.',
    tags: ['Spaces'],
    errors: APP_WRITE_ERRORS,
  }),
  getNumbering: routeDoc({
    operationId: 'getDocumentNumbering',
    summary: 'Read how documents are numbered',
    description:
      'The prefix and next number of invoices, quotes and credit notes (INV-, QUO-, CN- by default), each counted apart. Any member reads it.',
    tags: ['Spaces'],
    errors: APP_READ_ERRORS,
  }),
  updateNumbering: routeDoc({
    operationId: 'updateDocumentNumbering',
    summary: 'Change how documents are numbered',
    description:
      'Sets a kind’s prefix and the number its next generated document gets; numbers a live document already holds are skipped. Numbers sent by an integration are kept as sent. Owners and admins only.',
    tags: ['Spaces'],
    errors: APP_WRITE_ERRORS,
  }),
  closePeriod: routeDoc({
    operationId: 'closePeriod',
    summary: 'Close the books through a date',
    description:
      'Closes the books through a date: no entry dated on or before it can be booked or undone afterwards. Owners only; the date only moves forward.',
    tags: ['Spaces'],
    errors: APP_WRITE_ERRORS,
  }),
  listMembers: routeDoc({
    operationId: 'listMembers',
    summary: 'List members',
    description: "Lists the space's members and their roles, the newest member first, 50 a page.",
    tags: ['Spaces'],
    errors: APP_READ_ERRORS,
  }),
  addMember: routeDoc({
    operationId: 'addMember',
    summary: 'Add a member',
    description:
      'Adds a registered user to the space with a role. Owners and admins only; an unknown email is refused with user_not_found.',
    tags: ['Spaces'],
    errors: APP_WRITE_ERRORS,
  }),
  changeMemberRole: routeDoc({
    operationId: 'changeMemberRole',
    summary: "Change a member's role",
    description:
      "Changes a member's role. Owners and admins only; the last owner cannot be demoted (last_owner).",
    tags: ['Spaces'],
    errors: APP_WRITE_ERRORS,
  }),
  removeMember: routeDoc({
    operationId: 'removeMember',
    summary: 'Remove a member',
    description: 'Removes a member from the space. Owners and admins only; the last owner cannot be removed.',
    tags: ['Spaces'],
    errors: APP_READ_ERRORS,
  }),
};

export function registerSpaceRoutes(server: FastifyInstance, deps: service.SpacesDeps) {
  const app = typedRoutes(server);
  app.post(
    '/app/api/spaces',
    {
      schema: {
        ...docs.createSpace,
        body: SpaceCreate,
        response: { 201: SpaceOut },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const userId = requireCaller(request).userId;
      const space = await service.createSpace(deps, userId, body, request.headers['accept-language']);
      return reply.code(201).send(space);
    },
  );
  app.get(
    '/app/api/spaces',
    {
      schema: {
        ...docs.listSpaces,
        querystring: ListQuery,
        response: { 200: SpaceList },
      },
    },
    async (request) => service.listSpaces(deps, requireCaller(request).userId, request.query),
  );
  app.get(
    '/app/api/spaces/:id',
    {
      schema: {
        ...docs.getSpace,
        params: SpaceParams,
        response: { 200: SpaceOut },
      },
    },
    async (request) => {
      const { id } = request.params;
      return service.getSpace(deps, requireCaller(request).userId, id);
    },
  );
  app.patch(
    '/app/api/spaces/:id',
    {
      schema: {
        ...docs.updateSpace,
        params: SpaceParams,
        body: SpacePatch,
        response: { 200: SpaceOut },
      },
    },
    async (request) => {
      const { id } = request.params;
      return service.updateSpace(deps, requireCaller(request).userId, id, request.body);
    },
  );
  registerPeriodRoute(app, deps);
  registerProfileRoutes(app, deps);
  registerLogoRoutes(app, deps);
  registerMemberRoutes(app, deps);
}

const LogoOut = Type.Object({
  content_type: Type.Union([Type.Literal('image/png'), Type.Literal('image/jpeg')]),
  width: Type.Integer({ description: 'Pixels; at most 512 on the long side.' }),
  height: Type.Integer(),
  size: Type.Integer({ description: 'Bytes as stored.' }),
  url: Type.String({ description: 'Where public pages load it from (same origin).' }),
});

/**
 * The book's logo. The upload's body is the image itself (any content type is read as bytes and
 * judged by its first bytes), at most 1 MB; everything but PNG and JPEG is 422.
 */
function registerLogoRoutes(server: FastifyInstance, deps: service.SpacesDeps) {
  const path = '/app/api/spaces/:id/profile/logo';
  server.register(async (scope) => {
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: logo.LOGO_BYTES_MAX },
      (_request, body, done) => done(null, body),
    );
    const app = typedRoutes(scope);
    app.put(
      path,
      {
        schema: {
          ...routeDoc({
            operationId: 'uploadSpaceLogo',
            summary: "Upload the book's logo (PNG or JPEG, at most 1 MB)",
            description:
              'The body is the image file itself (image/png or image/jpeg). It is shrunk to at most 512 pixels on its long side, stored, and shown on the book’s pay pages and public invoice and quote pages; it replaces the logo the book had. SVG and other formats are refused (422); a larger body is 413. Owners and admins only.',
            tags: ['Spaces'],
            errors: APP_WRITE_ERRORS,
          }),
          params: SpaceParams,
          response: { 200: LogoOut },
        },
      },
      async (request) => {
        const bytes = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        return logo.uploadLogo(deps, requireCaller(request).userId, request.params.id, bytes);
      },
    );
  });
  const app = typedRoutes(server);
  app.get(
    path,
    {
      schema: {
        ...routeDoc({
          operationId: 'getSpaceLogo',
          summary: "Read the book's logo facts",
          description:
            'The stored logo’s type, size in pixels and bytes, and its public address; 404 when the book has none. Any member.',
          tags: ['Spaces'],
          errors: APP_READ_ERRORS,
        }),
        params: SpaceParams,
        response: { 200: LogoOut },
      },
    },
    async (request) => logo.describeLogo(deps, requireCaller(request).userId, request.params.id),
  );
  app.delete(
    path,
    {
      schema: {
        ...routeDoc({
          operationId: 'deleteSpaceLogo',
          summary: "Remove the book's logo",
          description: 'The book’s pages show no logo any more. Owners and admins only.',
          tags: ['Spaces'],
          errors: APP_WRITE_ERRORS,
        }),
        params: SpaceParams,
        response: { 200: Type.Object({ removed: Type.Boolean() }) },
      },
    },
    async (request) => {
      await logo.removeLogo(deps, requireCaller(request).userId, request.params.id);
      return { removed: true };
    },
  );
}

/** The seller profile: read by members, changed by owners and admins. */
function registerProfileRoutes(server: FastifyInstance, deps: service.SpacesDeps) {
  const app = typedRoutes(server);
  app.get(
    '/app/api/spaces/:id/profile',
    { schema: { ...docs.getProfile, params: SpaceParams, response: { 200: ProfileOut } } },
    async (request) => profile.getProfile(deps, requireCaller(request).userId, request.params.id),
  );
  app.get(
    '/app/api/spaces/:id/numbering',
    { schema: { ...docs.getNumbering, params: SpaceParams, response: { 200: NumberingOut } } },
    async (request) => numbering.getNumbering(deps, requireCaller(request).userId, request.params.id),
  );
  app.patch(
    '/app/api/spaces/:id/numbering',
    {
      schema: {
        ...docs.updateNumbering,
        params: SpaceParams,
        body: NumberingPatch,
        response: { 200: NumberingOut },
      },
    },
    async (request) =>
      numbering.updateNumbering(deps, requireCaller(request).userId, request.params.id, request.body),
  );
  app.patch(
    '/app/api/spaces/:id/profile',
    {
      schema: {
        ...docs.updateProfile,
        params: SpaceParams,
        body: ProfilePatch,
        response: { 200: ProfileOut },
      },
    },
    async (request) =>
      profile.updateProfile(deps, requireCaller(request).userId, request.params.id, request.body),
  );
}

/** Closing the books: a date that only moves forward. */
function registerPeriodRoute(server: FastifyInstance, deps: service.SpacesDeps) {
  const app = typedRoutes(server);
  app.post(
    '/app/api/spaces/:id/close-period',
    {
      schema: {
        ...docs.closePeriod,
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
      const { id } = request.params;
      return service.closePeriod(deps, requireCaller(request).userId, id, request.body.through);
    },
  );
}

function registerMemberRoutes(server: FastifyInstance, deps: service.SpacesDeps) {
  const app = typedRoutes(server);
  app.get(
    '/app/api/spaces/:id/members',
    {
      schema: {
        ...docs.listMembers,
        params: SpaceParams,
        querystring: ListQuery,
        response: { 200: MemberList },
      },
    },
    async (request) => {
      const { id } = request.params;
      return service.listMembers(deps, requireCaller(request).userId, id, request.query);
    },
  );
  app.post(
    '/app/api/spaces/:id/members',
    {
      schema: {
        ...docs.addMember,
        params: SpaceParams,
        body: MemberAdd,
        response: { 201: MemberOut },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const member = await service.addMember(deps, requireCaller(request).userId, id, request.body);
      return reply.code(201).send(member);
    },
  );
  app.patch(
    '/app/api/spaces/:id/members/:user_id',
    {
      schema: {
        ...docs.changeMemberRole,
        params: MemberParams,
        body: MemberPatch,
        response: { 200: MemberOut },
      },
    },
    async (request) => {
      const { id, user_id } = request.params;
      const { role } = request.body;
      return service.changeRole(deps, requireCaller(request).userId, id, user_id, role);
    },
  );
  app.delete(
    '/app/api/spaces/:id/members/:user_id',
    {
      schema: {
        ...docs.removeMember,
        params: MemberParams,
        response: { 200: Type.Object({ removed: Type.Boolean() }) },
      },
    },
    async (request) => {
      const { id, user_id } = request.params;
      await service.removeMember(deps, requireCaller(request).userId, id, user_id);
      return { removed: true };
    },
  );
}
