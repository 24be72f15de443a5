import type { FastifyInstance } from 'fastify';
import { APP_READ_ERRORS, APP_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { Text, Type } from '../../platform/http/schema-kit.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
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

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  listInvoiceDeliveries: routeDoc({
    operationId: 'listInvoiceDeliveries',
    summary: 'List invoice deliveries',
    description:
      "What was sent for the space's invoices (email or recorded only), newest first; filter by invoice_id. Any member may read.",
    tags: ['Invoices'],
    errors: APP_READ_ERRORS,
  }),
  writeOffInvoice: routeDoc({
    operationId: 'writeOffInvoice',
    summary: 'Write off an invoice',
    description:
      'Settles what is still due on a sent or partial invoice as a loss, with a reason; the invoice becomes paid via write_off and sends invoice.paid. Owners and admins only.',
    tags: ['Invoices'],
    errors: APP_WRITE_ERRORS,
  }),
};

/** The owner's app: what only a person may do to an invoice, and what was sent for invoices. */
export function registerInvoiceAppRoutes(server: FastifyInstance, deps: InvoicesDeps) {
  const app = typedRoutes(server);
  app.get(
    '/app/api/spaces/:id/invoice-deliveries',
    {
      schema: {
        ...docs.listInvoiceDeliveries,
        params: SpaceParams,
        querystring: DeliveriesQuery,
        response: { 200: Type.Object({ items: Type.Array(DeliveryOut) }) },
      },
    },
    async (request) => {
      const { id } = request.params;
      const { invoice_id } = request.query;
      return listDeliveries(deps, requireCaller(request).userId, id, invoice_id);
    },
  );
  app.post(
    '/app/api/spaces/:id/invoices/:invoice_id/write-off',
    {
      schema: {
        ...docs.writeOffInvoice,
        params: Params,
        body: WriteOffIn,
        response: { 200: InvoiceOut },
      },
    },
    async (request) => {
      const { id, invoice_id } = request.params;
      const { reason } = request.body;
      return writeOffInvoice(deps, requireCaller(request).userId, id, invoice_id, reason ?? '');
    },
  );
}
