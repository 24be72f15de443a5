import type { FastifyInstance } from 'fastify';
import { INTEGRATION_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { integrationRefusals, type Static, Type } from '../../platform/http/schema-kit.ts';
import { runWrite } from '../../platform/http/write.ts';
import { ContactCreate, type ContactCreateBody, ContactOut } from './schemas.ts';
import * as service from './service.ts';

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  createContact: routeDoc({
    operationId: 'createContact',
    summary: 'Create a contact',
    description:
      'Creates a contact with up to 20 addresses. Needs the contacts scope. save_to_book true also lists it in the space’s shared address book. ' +
      'At most one address may be primary; when none is marked, the first one is. With an Idempotency-Key a retry answers the first contact.',
    tags: ['Contacts'],
    errors: INTEGRATION_WRITE_ERRORS,
  }),
};

export function registerContactRoutes(app: FastifyInstance, deps: service.ContactsDeps) {
  app.post(
    '/integration/contacts',
    {
      config: { scope: 'contacts', idempotent: true },
      schema: {
        ...docs.createContact,
        body: ContactCreate,
        response: { 201: ContactOut },
      },
    },
    (request, reply) =>
      runWrite(deps, request, reply, 201, (tx) =>
        service.createContact(tx, deps.clock, request.integration!, request.body as ContactCreateBody),
      ),
  );
}

const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
export const ContactListQuery = Type.Object({
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});

/** The Contacts screen's list and create, for scripts with a session. */
export function registerContactAppRoutes(app: FastifyInstance, deps: service.ContactsDeps) {
  app.get(
    '/app/api/spaces/:id/contacts',
    {
      schema: {
        tags: ['app'],
        summary: "The book's address book, newest first, 50 a page",
        params: SpaceParams,
        querystring: ContactListQuery,
        response: {
          200: Type.Object({
            items: Type.Array(ContactOut),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
        },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      return service.listContactsInApp(
        deps,
        request.session!.userId,
        id,
        request.query as Static<typeof ContactListQuery>,
      );
    },
  );
  app.post(
    '/app/api/spaces/:id/contacts',
    { schema: { tags: ['app'], params: SpaceParams, body: ContactCreate, response: { 201: ContactOut } } },
    async (request, reply) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      const contact = await service.createContactInApp(
        deps,
        request.session!.userId,
        id,
        request.body as ContactCreateBody,
      );
      return reply.code(201).send(contact);
    },
  );
}
