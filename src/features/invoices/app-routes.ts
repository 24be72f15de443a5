import type { FastifyInstance } from 'fastify';
import { type Static, Text, Type } from '../../platform/http/schema-kit.ts';
import { InvoiceOut } from './schemas.ts';
import { type InvoicesDeps, listDeliveries, writeOffInvoice } from './service.ts';

const Params = Type.Object({
  id: Type.String({ format: 'uuid' }),
  invoice_id: Type.String({ format: 'uuid' }),
});
const WriteOffIn = Type.Object({ reason: Type.Optional(Text({ maxLength: 500, default: '' })) });

const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const DeliveriesQuery = Type.Object({ invoice_id: Type.Optional(Type.String({ format: 'uuid' })) });
const DeliveryOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  invoice_id: Type.String({ format: 'uuid' }),
  purpose: Type.String(),
  via: Type.Array(Type.String()),
  recipient: Type.String(),
  cc: Type.Array(Type.String()),
  message: Type.String(),
  auto_stage: Type.Union([Type.String(), Type.Null()]),
  mail_file: Type.Union([Type.String(), Type.Null()], {
    description: 'In development without SMTP_URL: the .eml file the mail was written to.',
  }),
  created_at: Type.String({ format: 'date-time' }),
});

/** The owner's app: what only a person may do to an invoice, and what was sent for invoices. */
export function registerInvoiceAppRoutes(app: FastifyInstance, deps: InvoicesDeps) {
  app.get(
    '/app/api/spaces/:id/invoice-deliveries',
    {
      schema: {
        tags: ['app'],
        params: SpaceParams,
        querystring: DeliveriesQuery,
        response: { 200: Type.Object({ items: Type.Array(DeliveryOut) }) },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      const { invoice_id } = request.query as Static<typeof DeliveriesQuery>;
      return listDeliveries(deps, request.session!.userId, id, invoice_id);
    },
  );
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
