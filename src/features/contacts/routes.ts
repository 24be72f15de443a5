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
import { contactEditsInApp, readContactInApp, updateContactInApp } from './edits.ts';
import { ContactCreate, ContactEditOut, ContactOut, ContactPatch } from './schemas.ts';
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
  listSpaceContacts: routeDoc({
    operationId: 'listSpaceContacts',
    summary: 'List the space’s address book',
    description:
      'Lists the contacts saved to the space’s shared address book to any member, newest first, 50 a page, each with its addresses. Send next_cursor back as cursor for the next page; a cursor this list did not give out is refused.',
    tags: ['Contacts'],
    errors: APP_READ_ERRORS,
  }),
  createSpaceContact: routeDoc({
    operationId: 'createSpaceContact',
    summary: 'Add a contact to the address book',
    description:
      'Creates a contact with up to 20 addresses for an owner, admin or member (not a viewer) and lists it in the space’s shared address book (save_to_book is always true here). At most one address may be primary; when none is marked, the first one is.',
    tags: ['Contacts'],
    errors: APP_WRITE_ERRORS,
  }),
  readSpaceContact: routeDoc({
    operationId: 'readSpaceContact',
    summary: 'Read a contact',
    description: 'One contact of the space with its addresses, to any member.',
    tags: ['Contacts'],
    errors: APP_READ_ERRORS,
  }),
  updateSpaceContact: routeDoc({
    operationId: 'updateSpaceContact',
    summary: 'Change a contact',
    description:
      'Changes a contact for an owner, admin or member (not a viewer): each field given replaces the one held, a field left out stays. addresses, when given, replaces the whole list in order, checked as on creation (IBAN mod-97, BIC shape, sort code, ABA routing; at most one primary). ' +
      'Every real change is recorded with who made it, when, and each field before and after. Invoices already made keep the buyer as it was when they were made.',
    tags: ['Contacts'],
    errors: APP_WRITE_ERRORS,
  }),
  listSpaceContactEdits: routeDoc({
    operationId: 'listSpaceContactEdits',
    summary: 'List a contact’s recorded edits',
    description:
      'The 50 newest edits of a contact, newest first: who, when, and each changed field before and after.',
    tags: ['Contacts'],
    errors: APP_READ_ERRORS,
  }),
};

export function registerContactRoutes(server: FastifyInstance, deps: service.ContactsDeps) {
  const app = typedRoutes(server);
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
        service.createContact(tx, deps.clock, requireCaller(request, 'integration'), request.body),
      ),
  );
}

const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const ContactParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  contact_id: Type.String({ format: 'uuid' }),
});
export const ContactListQuery = Type.Object({
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});

/** The Contacts screen's list and create, for scripts with a session. */
export function registerContactAppRoutes(server: FastifyInstance, deps: service.ContactsDeps) {
  const app = typedRoutes(server);
  app.get(
    '/app/api/spaces/:id/contacts',
    {
      schema: {
        ...docs.listSpaceContacts,
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
      const { id } = request.params;
      return service.listContactsInApp(deps, requireCaller(request).userId, id, request.query);
    },
  );
  app.post(
    '/app/api/spaces/:id/contacts',
    {
      schema: {
        ...docs.createSpaceContact,
        params: SpaceParams,
        body: ContactCreate,
        response: { 201: ContactOut },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const contact = await service.createContactInApp(deps, requireCaller(request).userId, id, request.body);
      return reply.code(201).send(contact);
    },
  );
  registerContactEditRoutes(server, deps);
}

/** One contact, its edit and its recorded edits, for scripts with a session. */
function registerContactEditRoutes(server: FastifyInstance, deps: service.ContactsDeps) {
  const app = typedRoutes(server);
  const path = '/app/api/spaces/:id/contacts/:contact_id';
  app.get(
    path,
    { schema: { ...docs.readSpaceContact, params: ContactParams, response: { 200: ContactOut } } },
    (request) =>
      readContactInApp(deps, requireCaller(request).userId, request.params.id, request.params.contact_id),
  );
  app.patch(
    path,
    {
      schema: {
        ...docs.updateSpaceContact,
        params: ContactParams,
        body: ContactPatch,
        response: { 200: ContactOut },
      },
    },
    (request) =>
      updateContactInApp(
        deps,
        requireCaller(request).userId,
        request.params.id,
        request.params.contact_id,
        request.body,
      ),
  );
  app.get(
    `${path}/edits`,
    {
      schema: {
        ...docs.listSpaceContactEdits,
        params: ContactParams,
        response: { 200: Type.Object({ items: Type.Array(ContactEditOut) }) },
      },
    },
    async (request) => ({
      items: await contactEditsInApp(
        deps,
        requireCaller(request).userId,
        request.params.id,
        request.params.contact_id,
      ),
    }),
  );
}
