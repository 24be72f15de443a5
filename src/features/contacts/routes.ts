import type { FastifyInstance } from 'fastify';
import { integrationRefusals } from '../../platform/http/schema-kit.ts';
import { runWrite } from '../../platform/http/write.ts';
import { ContactCreate, type ContactCreateBody, ContactOut } from './schemas.ts';
import * as service from './service.ts';

export function registerContactRoutes(app: FastifyInstance, deps: service.ContactsDeps) {
  app.post(
    '/integration/contacts',
    {
      config: { scope: 'contacts', idempotent: true },
      schema: {
        tags: ['integration'],
        summary: 'Create a contact',
        description:
          'Creates a contact with up to 20 addresses. save_to_book true also lists it in the space’s shared address book. ' +
          'At most one address may be primary; when none is marked, the first one is.',
        body: ContactCreate,
        response: { 201: ContactOut, ...integrationRefusals },
      },
    },
    (request, reply) =>
      runWrite(deps, request, reply, 201, (tx) =>
        service.createContact(tx, deps.clock, request.integration!, request.body as ContactCreateBody),
      ),
  );
}
