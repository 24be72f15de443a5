import type { FastifyInstance } from 'fastify';
import { APP_READ_ERRORS, APP_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { Type } from '../../platform/http/schema-kit.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
import * as service from './invitations.ts';
import {
  InvitationAccept,
  InvitationCreate,
  InvitationJoined,
  InvitationList,
  InvitationOut,
  InvitationParams,
  SpaceParams,
} from './schemas.ts';

const docs = {
  inviteMember: routeDoc({
    operationId: 'inviteMember',
    summary: 'Invite someone by email',
    description:
      'Mails a link that lets its holder join the space with the role given, once, within 7 days (signing up first if they have no account). Inviting an address again revokes its earlier link. Owners and admins only; only an owner invites an owner. 409 conflict when the address is a member already; 422 delivery_unavailable without a mail server.',
    tags: ['Spaces'],
    errors: APP_WRITE_ERRORS,
  }),
  listInvitations: routeDoc({
    operationId: 'listInvitations',
    summary: 'List pending invitations',
    description:
      "The space's invitations neither accepted, revoked nor expired, the newest first (at most 50). Owners and admins only.",
    tags: ['Spaces'],
    errors: APP_READ_ERRORS,
  }),
  revokeInvitation: routeDoc({
    operationId: 'revokeInvitation',
    summary: 'Revoke a pending invitation',
    description:
      'Its link stops working at once. Owners and admins only; only an owner revokes an invitation to be owner.',
    tags: ['Spaces'],
    errors: APP_WRITE_ERRORS,
  }),
  acceptInvitation: routeDoc({
    operationId: 'acceptInvitation',
    summary: 'Accept an invitation',
    description:
      'The signed-in caller joins the space of the link with its role; the link is used up. An unknown, used, revoked or expired link is 422 invalid_request with details.field "token" and details.reason; a caller who is a member already is 409 conflict and the link stays unused.',
    tags: ['Spaces'],
    errors: APP_WRITE_ERRORS,
  }),
};

/** Invitations to a space (app API, behind the session guard). */
export function registerInvitationRoutes(server: FastifyInstance, deps: service.InvitationDeps) {
  const app = typedRoutes(server);
  app.post(
    '/app/api/spaces/:id/invitations',
    {
      schema: {
        ...docs.inviteMember,
        params: SpaceParams,
        body: InvitationCreate,
        response: { 201: InvitationOut },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const invitation = await service.inviteMember(deps, requireCaller(request).userId, id, request.body);
      return reply.code(201).send(invitation);
    },
  );
  app.get(
    '/app/api/spaces/:id/invitations',
    { schema: { ...docs.listInvitations, params: SpaceParams, response: { 200: InvitationList } } },
    async (request) => service.listInvitations(deps, requireCaller(request).userId, request.params.id),
  );
  app.delete(
    '/app/api/spaces/:id/invitations/:invitation_id',
    {
      schema: {
        ...docs.revokeInvitation,
        params: InvitationParams,
        response: { 200: Type.Object({ revoked: Type.Boolean() }) },
      },
    },
    async (request) => {
      const { id, invitation_id } = request.params;
      await service.revokeInvitation(deps, requireCaller(request).userId, id, invitation_id);
      return { revoked: true };
    },
  );
  app.post(
    '/app/api/invitations/accept',
    {
      schema: { ...docs.acceptInvitation, body: InvitationAccept, response: { 200: InvitationJoined } },
    },
    async (request) =>
      service.acceptInvitation(deps, requireCaller(request, 'session').userId, request.body.token),
  );
}
