import type { FastifyInstance } from 'fastify';
import { INTEGRATION_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
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
