import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Queryable } from '../../platform/db/database.ts';
import {
  INTEGRATION_READ_ERRORS,
  INTEGRATION_WRITE_ERRORS,
  type RouteDoc,
  routeDoc,
} from '../../platform/http/openapi.ts';
import type { Static, TSchema } from '../../platform/http/schema-kit.ts';
import { runWrite } from '../../platform/http/write.ts';
import {
  ClientOverride,
  EmptyIn,
  IdParams,
  IntegrationInvoiceCreate,
  InvoiceOut,
  InvoicePaymentCreate,
  RemindIn,
  RemindOut,
  type SellerBody,
  SellerOverride,
  SendIn,
  VoidIn,
} from './schemas.ts';
import * as service from './service.ts';

const tags = ['Invoices'];
const config = { scope: 'invoices' as const, idempotent: true };

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  createInvoice: routeDoc({
    operationId: 'createInvoice',
    summary: 'Mirror an invoice into the space',
    description:
      'Mirrors an invoice the seller issued (number is the seller’s own document number, unique in the space) with its line items and totals; it is a draft until sent. Needs the invoices scope. With an Idempotency-Key a retry answers the first invoice. Payment, claimed payment and deferral requests are sent to the key’s webhook address.',
    tags,
    errors: INTEGRATION_WRITE_ERRORS,
  }),
  getInvoice: routeDoc({
    operationId: 'getInvoice',
    summary: 'Read an invoice',
    description:
      'Reads one invoice of the key’s space with its status, payments and pay page token. Needs the invoices scope.',
    tags,
    errors: INTEGRATION_READ_ERRORS,
  }),
  setInvoiceSeller: {
    operationId: 'setInvoiceSeller',
    summary: "Set the issuer's requisites for one invoice",
    description:
      'Replaces the issuer’s name, address and bank or chain requisites printed on this invoice only. Refused once the invoice is void.',
  },
  setInvoiceClient: {
    operationId: 'setInvoiceClient',
    summary: "Set the client's requisites for one invoice",
    description:
      'Replaces the client’s name, email and requisites on this invoice only. Refused once the invoice is void.',
  },
  sendInvoice: {
    operationId: 'sendInvoice',
    summary: 'Send an invoice (via "none" marks it sent)',
    description:
      'Sends a draft invoice to the client by email, with via "chat" to the client’s connected chat group (the PDF with "I paid" and "Need more time" buttons; 503 chat_unavailable without the bot, 422 delivery_unavailable when the contact has no group, 403 plan_required below Pro), or with via "none" only marks it sent. From then on it can be paid on its page and reminded.',
  },
  recordInvoicePayment: {
    operationId: 'recordInvoicePayment',
    summary: 'Record a payment against a sent or partial invoice',
    description:
      'Books a payment received outside Tollbook, in the invoice’s own currency, against a sent or partial invoice. The invoice becomes partial or paid; an amount above what is still due is refused (amount_not_accepted).',
  },
  voidInvoice: {
    operationId: 'voidInvoice',
    summary: 'Void an invoice (payments stay booked)',
    description: 'Voids an invoice that is not paid in full. Payments already recorded stay booked.',
  },
  remindInvoice: {
    operationId: 'remindInvoice',
    summary: 'Record a reminder for a sent or partial invoice',
    description:
      'Sends (or records) a reminder for an invoice that is sent or partly paid; other states are refused. Without via it goes by mail when mail is configured and to the client’s chat group when one is connected; via "email" or "chat" sends by that channel only and refuses when it is unavailable.',
  },
};

type Action = (tx: Queryable, spaceId: string, id: string, body: never) => Promise<unknown>;

/** One POST /integration/invoices/{id}/<action> route: schema → service in runWrite → reply. */
function invoiceAction(
  app: FastifyInstance,
  deps: service.InvoicesDeps,
  action: string,
  spec: Pick<RouteDoc, 'operationId' | 'summary' | 'description'> & {
    body: TSchema;
    response?: TSchema;
    run: Action;
  },
) {
  app.post(
    `/integration/invoices/:id/${action}`,
    {
      config,
      schema: {
        ...routeDoc({
          operationId: spec.operationId,
          summary: spec.summary,
          description: spec.description,
          tags,
          errors: INTEGRATION_WRITE_ERRORS,
        }),
        params: IdParams,
        body: spec.body,
        response: { 200: spec.response ?? InvoiceOut },
      },
    },
    (request: FastifyRequest, reply: FastifyReply) => {
      const { id } = request.params as Static<typeof IdParams>;
      const spaceId = request.integration!.spaceId;
      return runWrite(deps, request, reply, 200, (tx) =>
        spec.run(tx, spaceId, id, (request.body ?? {}) as never),
      );
    },
  );
}

export function registerInvoiceRoutes(app: FastifyInstance, deps: service.InvoicesDeps) {
  app.post(
    '/integration/invoices',
    {
      config,
      schema: {
        ...docs.createInvoice,
        body: IntegrationInvoiceCreate,
        response: { 201: InvoiceOut },
      },
    },
    (request, reply) =>
      runWrite(deps, request, reply, 201, (tx) =>
        service.createInvoice(
          tx,
          deps,
          request.integration!,
          request.body as Static<typeof IntegrationInvoiceCreate>,
        ),
      ),
  );
  app.get(
    '/integration/invoices/:id',
    {
      config: { scope: 'invoices' },
      schema: {
        ...docs.getInvoice,
        params: IdParams,
        response: { 200: InvoiceOut },
      },
    },
    (request) =>
      service.getInvoice(deps, request.integration!.spaceId, (request.params as Static<typeof IdParams>).id),
  );
  invoiceAction(app, deps, 'seller', {
    ...docs.setInvoiceSeller,
    body: SellerOverride,
    run: (tx, spaceId, id, body: SellerBody) => service.setParty(tx, deps, spaceId, id, { seller: body }),
  });
  invoiceAction(app, deps, 'client', {
    ...docs.setInvoiceClient,
    body: ClientOverride,
    run: (tx, spaceId, id, body: Static<typeof ClientOverride>) =>
      service.setParty(tx, deps, spaceId, id, { client: body }),
  });
  invoiceAction(app, deps, 'send', {
    ...docs.sendInvoice,
    body: SendIn,
    run: (tx, spaceId, id, body: Static<typeof SendIn>) => service.sendInvoice(tx, deps, spaceId, id, body),
  });
  invoiceAction(app, deps, 'payments', {
    ...docs.recordInvoicePayment,
    body: InvoicePaymentCreate,
    run: (tx, spaceId, id, body: Static<typeof InvoicePaymentCreate>) =>
      service.recordPayment(tx, deps, spaceId, id, body),
  });
  invoiceAction(app, deps, 'void', {
    ...docs.voidInvoice,
    body: VoidIn,
    run: (tx, spaceId, id, body: Static<typeof VoidIn>) =>
      service.voidInvoice(tx, deps, spaceId, id, body.reason ?? ''),
  });
  for (const decision of ['accept', 'decline'] as const) {
    invoiceAction(app, deps, decision, {
      operationId: decision === 'accept' ? 'acceptQuote' : 'declineQuote',
      summary: `${decision === 'accept' ? 'Accept' : 'Decline'} a sent quote`,
      description: `${decision === 'accept' ? 'Accepts' : 'Declines'} a quote that was sent and not yet decided; any other document or state is refused (invoice_state).`,
      body: EmptyIn,
      run: (tx, spaceId, id) => service.decideQuote(tx, deps, spaceId, id, decision),
    });
  }
  invoiceAction(app, deps, 'remind', {
    ...docs.remindInvoice,
    body: RemindIn,
    response: RemindOut,
    run: (tx, spaceId, id, body: Static<typeof RemindIn>) =>
      service.remindInvoice(tx, deps, spaceId, id, body.message ?? '', body.via),
  });
}
