import type { FastifyInstance } from 'fastify';
import { type Static, Text, Type } from '../../platform/http/schema-kit.ts';
import { InvoiceOut } from './schemas.ts';
import { type InvoicesDeps, writeOffInvoice } from './service.ts';

const Params = Type.Object({
  id: Type.String({ format: 'uuid' }),
  invoice_id: Type.String({ format: 'uuid' }),
});
const WriteOffIn = Type.Object({ reason: Type.Optional(Text({ maxLength: 500, default: '' })) });

/** The owner's app: what only a person may do to an invoice. */
export function registerInvoiceAppRoutes(app: FastifyInstance, deps: InvoicesDeps) {
  app.post(
    '/app/api/spaces/:id/invoices/:invoice_id/write-off',
    { schema: { tags: ['app'], params: Params, body: WriteOffIn, response: { 200: InvoiceOut } } },
    async (request) => {
      const { id, invoice_id } = request.params as Static<typeof Params>;
      const { reason } = request.body as Static<typeof WriteOffIn>;
      return writeOffInvoice(deps, request.session!.userId, id, invoice_id, reason ?? '');
    },
  );
}
