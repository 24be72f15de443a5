import type { FastifyInstance } from 'fastify';
import {
  DELIVERY_ERRORS,
  INTEGRATION_READ_ERRORS,
  INTEGRATION_WRITE_ERRORS,
  type PeeredDoc,
  peeredRouteDoc,
  routeDoc,
} from '../../platform/http/openapi.ts';
import type { TSchema } from '../../platform/http/schema-kit.ts';
import { requireCaller, type TypedApp, typedRoutes } from '../../platform/http/typed.ts';
import { runWrite } from '../../platform/http/write.ts';
import { einvoiceFile } from './einvoice-file.ts';
import {
  ClientOverride,
  EinvoiceFileOut,
  EinvoiceQuery,
  EmptyIn,
  IdParams,
  IntegrationInvoiceCreate,
  InvoiceOut,
  InvoicePaymentCreate,
  RemindIn,
  RemindOut,
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
  getInvoiceEinvoice: routeDoc({
    operationId: 'getInvoiceEinvoice',
    summary: 'Download an invoice or credit note as an e-invoice (Factur-X, CII or UBL)',
    description:
      'Answers the document as an EN 16931 e-invoice attachment: format=facturx a PDF/A-3 with the CII embedded (application/pdf), format=cii UN/CEFACT CII and format=ubl UBL 2.1 with the Peppol BIS Billing 3.0 customization (application/xml). What EN 16931 needs and the book’s seller profile or the document lacks is refused with 422 einvoice_incomplete, details.missing listing the fields; a quote is refused (invoice_state). Needs the invoices scope.',
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
    peers: DELIVERY_ERRORS,
    summary: 'Send an invoice (via "none" marks it sent)',
    description:
      'Sends a draft invoice to the client by email, with via "chat" to the client’s connected chat group (the PDF with "I paid" and "Need more time" buttons; 503 chat_unavailable without the bot, 422 delivery_unavailable when the contact has no group, 403 plan_required below Pro), or with via "none" only marks it sent. Mail and chat posts are queued with the send and leave after it commits, retried while the mail server or Telegram cannot be reached; delivered_in_app turns true once the chat post is made. From then on it can be paid on its page and reminded.',
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
    peers: DELIVERY_ERRORS,
    summary: 'Record a reminder for a sent or partial invoice',
    description:
      'Sends (or records) a reminder for an invoice that is sent or partly paid; other states are refused. Without via it goes by mail when mail is configured and to the client’s chat group when one is connected; via "email" or "chat" sends by that channel only and refuses when it is unavailable.',
  },
};

/**
 * The options of one POST /integration/invoices/{id}/<action> route. The handler is written where
 * the route is registered, so the type provider reads its body from the concrete schema.
 */
function actionOptions<Body extends TSchema, Out extends TSchema>(doc: PeeredDoc, body: Body, response: Out) {
  return {
    config,
    schema: {
      ...peeredRouteDoc(doc, tags, INTEGRATION_WRITE_ERRORS),
      params: IdParams,
      body,
      response: { 200: response },
    },
  };
}

export function registerInvoiceRoutes(server: FastifyInstance, deps: service.InvoicesDeps) {
  const app = typedRoutes(server);
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
        service.createInvoice(tx, deps, requireCaller(request, 'integration'), request.body),
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
    (request) => service.getInvoice(deps, requireCaller(request, 'integration').spaceId, request.params.id),
  );
  app.get(
    '/integration/invoices/:id/einvoice',
    {
      config: { scope: 'invoices' },
      schema: {
        ...docs.getInvoiceEinvoice,
        params: IdParams,
        querystring: EinvoiceQuery,
        response: { 200: EinvoiceFileOut },
      },
    },
    async (request, reply) => {
      const { spaceId } = requireCaller(request, 'integration');
      const file = await einvoiceFile(deps, spaceId, request.params.id, request.query.format);
      return reply
        .type(file.contentType)
        .header('content-disposition', `attachment; filename="${file.filename}"`)
        .send(file.body);
    },
  );
  registerInvoiceActions(app, deps);
}

/** What the key may do to one invoice: POST /integration/invoices/{id}/<action>. */
function registerInvoiceActions(app: TypedApp, deps: service.InvoicesDeps) {
  app.post(
    '/integration/invoices/:id/seller',
    actionOptions(docs.setInvoiceSeller, SellerOverride, InvoiceOut),
    (request, reply) => {
      const { spaceId } = requireCaller(request, 'integration');
      return runWrite(deps, request, reply, 200, (tx) =>
        service.setParty(tx, deps, spaceId, request.params.id, { seller: request.body }),
      );
    },
  );
  app.post(
    '/integration/invoices/:id/client',
    actionOptions(docs.setInvoiceClient, ClientOverride, InvoiceOut),
    (request, reply) => {
      const { spaceId } = requireCaller(request, 'integration');
      return runWrite(deps, request, reply, 200, (tx) =>
        service.setParty(tx, deps, spaceId, request.params.id, { client: request.body }),
      );
    },
  );
  app.post(
    '/integration/invoices/:id/send',
    actionOptions(docs.sendInvoice, SendIn, InvoiceOut),
    (request, reply) => {
      const { spaceId } = requireCaller(request, 'integration');
      return runWrite(deps, request, reply, 200, (tx) =>
        service.sendInvoice(tx, deps, spaceId, request.params.id, request.body),
      );
    },
  );
  app.post(
    '/integration/invoices/:id/payments',
    actionOptions(docs.recordInvoicePayment, InvoicePaymentCreate, InvoiceOut),
    (request, reply) => {
      const { spaceId } = requireCaller(request, 'integration');
      return runWrite(deps, request, reply, 200, (tx) =>
        service.recordPayment(tx, deps, spaceId, request.params.id, request.body),
      );
    },
  );
  app.post(
    '/integration/invoices/:id/void',
    actionOptions(docs.voidInvoice, VoidIn, InvoiceOut),
    (request, reply) => {
      const { spaceId } = requireCaller(request, 'integration');
      return runWrite(deps, request, reply, 200, (tx) =>
        service.voidInvoice(tx, deps, spaceId, request.params.id, request.body.reason ?? ''),
      );
    },
  );
  for (const decision of ['accept', 'decline'] as const) {
    const doc = {
      operationId: decision === 'accept' ? 'acceptQuote' : 'declineQuote',
      summary: `${decision === 'accept' ? 'Accept' : 'Decline'} a sent quote`,
      description: `${decision === 'accept' ? 'Accepts' : 'Declines'} a quote that was sent and not yet decided; any other document or state is refused (invoice_state).`,
    };
    app.post(
      `/integration/invoices/:id/${decision}`,
      actionOptions(doc, EmptyIn, InvoiceOut),
      (request, reply) => {
        const { spaceId } = requireCaller(request, 'integration');
        return runWrite(deps, request, reply, 200, (tx) =>
          service.decideQuote(tx, deps, spaceId, request.params.id, decision),
        );
      },
    );
  }
  app.post(
    '/integration/invoices/:id/remind',
    actionOptions(docs.remindInvoice, RemindIn, RemindOut),
    (request, reply) => {
      const { spaceId } = requireCaller(request, 'integration');
      const { message, via } = request.body;
      return runWrite(deps, request, reply, 200, (tx) =>
        service.remindInvoice(tx, deps, spaceId, request.params.id, message ?? '', via),
      );
    },
  );
}
