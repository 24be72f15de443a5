import type { FastifyInstance } from 'fastify';
import {
  APP_READ_ERRORS,
  APP_WRITE_ERRORS,
  DELIVERY_ERRORS,
  type PeeredDoc,
  peeredRouteDoc,
  routeDoc,
} from '../../platform/http/openapi.ts';
import type { TSchema } from '../../platform/http/schema-kit.ts';
import { requireCaller, type TypedApp, typedRoutes } from '../../platform/http/typed.ts';
import * as writes from './app-writes.ts';
import { einvoiceFileInApp } from './einvoice-file.ts';
import * as reads from './reads.ts';
import {
  EinvoiceFileOut,
  EinvoiceQuery,
  EmptyIn,
  IntegrationInvoiceCreate,
  InvoiceListOut,
  InvoiceListQuery,
  InvoiceOut,
  InvoicePatch,
  InvoicePaymentCreate,
  RemindIn,
  RemindOut,
  SendIn,
  SpaceInvoiceParams,
  SpaceOnlyParams,
  VoidIn,
} from './schemas.ts';
import type { InvoicesDeps } from './service.ts';

// The app API of invoices, quotes and credit notes (/app/api/spaces/{id}/invoices…): what the
// Invoices screens do, for scripts too. Same bodies and answers as the integration routes;
// a session instead of a key, and the person's role instead of the key's scope.

const tags = ['Invoices'];
const WHO_WRITES = 'Owners, admins and members may; a viewer is refused (403).';

/** The OpenAPI description of each action below (see platform/http/openapi.ts). */
const actionDocs = {
  send: {
    operationId: 'sendSpaceInvoice',
    peers: DELIVERY_ERRORS,
    summary: 'Send an invoice or a quote (via "none" marks it sent)',
    description: `Sends a draft invoice or quote by email (to client_email unless "to" is given, with the PDF attached and the public page linked), or with via "none" only marks it sent. Sending a sent one again delivers it again. Without a mail server the email road is refused (delivery_unavailable). ${WHO_WRITES}`,
  },
  payments: {
    operationId: 'recordSpaceInvoicePayment',
    summary: 'Record a payment against a sent or partial invoice',
    description: `Books a payment received outside Tollbook, in the invoice's currency, into the invoice's account (or account_id): the invoice becomes partial or paid, and invoice.paid fires once. More than is open is refused (amount_not_accepted); other states are refused (invoice_state). ${WHO_WRITES}`,
  },
  void: {
    operationId: 'voidSpaceInvoice',
    summary: 'Void an invoice, quote or credit note (payments stay booked)',
    description: `Voids the document with an optional reason; payments already recorded stay booked, and a voided credit note gives its amount back to the invoice it corrected. Voiding a void one answers it as it is. ${WHO_WRITES}`,
  },
  remind: {
    operationId: 'remindSpaceInvoice',
    peers: DELIVERY_ERRORS,
    summary: 'Remind the client of a sent or partial invoice',
    description: `Mails a reminder to the client when mail is configured and the invoice has a client email, and records it either way (via lists the roads taken). Other states are refused (invoice_state). ${WHO_WRITES}`,
  },
  accept: {
    operationId: 'acceptSpaceQuote',
    summary: 'Accept a sent quote (it becomes a draft invoice)',
    description: `Accepts a quote that was sent and is not past its due date: the quote reads quote_accepted and names, in invoice_id, the draft invoice made from it (same client, lines and totals, due in 14 days). Anything else is refused (invoice_state). ${WHO_WRITES}`,
  },
  decline: {
    operationId: 'declineSpaceQuote',
    summary: 'Decline a sent quote',
    description: `Declines a quote that was sent and is not past its due date; anything else is refused (invoice_state). ${WHO_WRITES}`,
  },
};

/**
 * The options of one POST /app/api/spaces/{id}/invoices/{invoice_id}/<action> route. The handler
 * is written where the route is registered, so the type provider reads its body from the
 * concrete schema.
 */
function actionOptions<Body extends TSchema, Out extends TSchema>(doc: PeeredDoc, body: Body, response: Out) {
  return {
    schema: {
      ...peeredRouteDoc(doc, tags, APP_WRITE_ERRORS),
      params: SpaceInvoiceParams,
      body,
      response: { 200: response },
    },
  };
}

function registerReads(app: TypedApp, deps: InvoicesDeps) {
  app.get(
    '/app/api/spaces/:id/invoices',
    {
      schema: {
        ...routeDoc({
          operationId: 'listSpaceInvoices',
          summary: 'List invoices, quotes and credit notes, newest first, 50 a page',
          description:
            'Lists the space’s documents to any member, newest first, 50 a page, each with its payments. kind filters by invoice, quote or credit_note; status by the status as shown (a sent quote past its due date is quote_expired). Send next_cursor back as cursor for the next page; a cursor this list did not give out is refused.',
          tags,
          errors: APP_READ_ERRORS,
        }),
        params: SpaceOnlyParams,
        querystring: InvoiceListQuery,
        response: { 200: InvoiceListOut },
      },
    },
    async (request) =>
      reads.listInvoices(deps, requireCaller(request).userId, request.params.id, request.query),
  );
  app.get(
    '/app/api/spaces/:id/invoices/:invoice_id',
    {
      schema: {
        ...routeDoc({
          operationId: 'getSpaceInvoice',
          summary: 'Read an invoice, quote or credit note',
          description:
            'Reads one document of the space with its lines, totals, status, payments and public page address. Any member may read; another space’s document is not found (404).',
          tags,
          errors: APP_READ_ERRORS,
        }),
        params: SpaceInvoiceParams,
        response: { 200: InvoiceOut },
      },
    },
    async (request) =>
      reads.readInvoice(deps, requireCaller(request).userId, request.params.id, request.params.invoice_id),
  );
  app.get(
    '/app/api/spaces/:id/invoices/:invoice_id/pdf',
    {
      schema: {
        ...routeDoc({
          operationId: 'getSpaceInvoicePdf',
          summary: 'Download an invoice, quote or credit note as PDF',
          description:
            'Answers the document as a PDF attachment (application/pdf), the same one a sent mail carries. Any member may download it.',
          tags,
          errors: APP_READ_ERRORS,
        }),
        params: SpaceInvoiceParams,
      },
    },
    async (request, reply) => {
      const file = await reads.invoicePdfFile(
        deps,
        requireCaller(request).userId,
        request.params.id,
        request.params.invoice_id,
      );
      return reply
        .type('application/pdf')
        .header('content-disposition', `attachment; filename="${file.filename}"`)
        .send(file.body);
    },
  );
}

/** The e-invoice of one document: Factur-X, CII or UBL (einvoice-file.ts). */
function registerEinvoiceRead(app: TypedApp, deps: InvoicesDeps) {
  app.get(
    '/app/api/spaces/:id/invoices/:invoice_id/einvoice',
    {
      schema: {
        ...routeDoc({
          operationId: 'getSpaceInvoiceEinvoice',
          summary: 'Download an invoice or credit note as an e-invoice (Factur-X, CII or UBL)',
          description:
            'Answers the document as an EN 16931 e-invoice attachment, as the integration route does: facturx (application/pdf), cii or ubl (application/xml). Missing seller or buyer data is refused with 422 einvoice_incomplete and details.missing; a quote is refused (invoice_state). Any member may download it.',
          tags,
          errors: APP_READ_ERRORS,
        }),
        params: SpaceInvoiceParams,
        querystring: EinvoiceQuery,
        response: { 200: EinvoiceFileOut },
      },
    },
    async (request, reply) => {
      const { id, invoice_id } = request.params;
      const file = await einvoiceFileInApp(
        deps,
        requireCaller(request).userId,
        id,
        invoice_id,
        request.query.format,
      );
      return reply
        .type(file.contentType)
        .header('content-disposition', `attachment; filename="${file.filename}"`)
        .send(file.body);
    },
  );
}

/** The app API of invoices: list, read, PDF, create, and each action a person may take. */
export function registerInvoiceDocumentAppRoutes(server: FastifyInstance, deps: InvoicesDeps) {
  const app = typedRoutes(server);
  registerReads(app, deps);
  registerEinvoiceRead(app, deps);
  app.post(
    '/app/api/spaces/:id/invoices',
    {
      schema: {
        ...routeDoc({
          operationId: 'createSpaceInvoice',
          summary: 'Create an invoice, a quote or a credit note',
          description: `Creates a document in the space from the same body the integration route takes: kind invoice starts as a draft, quote as quote_draft, credit_note as issued (with corrects_invoice_id it adds to that invoice's credited_amount). Totals are computed here; number is generated (INV-nnnnnn) unless given, and a number a live document uses is a conflict (409). ${WHO_WRITES}`,
          tags,
          errors: APP_WRITE_ERRORS,
        }),
        params: SpaceOnlyParams,
        body: IntegrationInvoiceCreate,
        response: { 201: InvoiceOut },
      },
    },
    async (request, reply) => {
      const created = await writes.createInvoiceInApp(
        deps,
        requireCaller(request).userId,
        request.params.id,
        request.body,
      );
      return reply.code(201).send(created);
    },
  );
  app.patch(
    '/app/api/spaces/:id/invoices/:invoice_id',
    {
      schema: {
        ...routeDoc({
          operationId: 'updateSpaceInvoice',
          summary: 'Change a draft invoice or quote',
          description: `Changes a draft invoice's or quote's client, lines, dates and notes; fields left out stay, and lines, when given, replace all lines. The totals are computed again. Once sent (and for a credit note, issued when made) it is refused (invoice_state): a sent invoice is corrected by a credit note. ${WHO_WRITES}`,
          tags,
          errors: APP_WRITE_ERRORS,
        }),
        params: SpaceInvoiceParams,
        body: InvoicePatch,
        response: { 200: InvoiceOut },
      },
    },
    async (request) => {
      const { id, invoice_id } = request.params;
      return writes.reviseInvoiceInApp(deps, requireCaller(request).userId, id, invoice_id, request.body);
    },
  );
  registerActions(app, deps);
}

function registerActions(app: TypedApp, deps: InvoicesDeps) {
  const path = (action: string) => `/app/api/spaces/:id/invoices/:invoice_id/${action}`;
  app.post(path('send'), actionOptions(actionDocs.send, SendIn, InvoiceOut), async (request) => {
    const { id, invoice_id } = request.params;
    return writes.sendInvoiceInApp(deps, requireCaller(request).userId, id, invoice_id, request.body);
  });
  app.post(
    path('payments'),
    actionOptions(actionDocs.payments, InvoicePaymentCreate, InvoiceOut),
    async (request) => {
      const { id, invoice_id } = request.params;
      return writes.recordPaymentInApp(deps, requireCaller(request).userId, id, invoice_id, request.body);
    },
  );
  app.post(path('void'), actionOptions(actionDocs.void, VoidIn, InvoiceOut), async (request) => {
    const { id, invoice_id } = request.params;
    const reason = request.body.reason ?? '';
    return writes.voidInvoiceInApp(deps, requireCaller(request).userId, id, invoice_id, reason);
  });
  app.post(path('remind'), actionOptions(actionDocs.remind, RemindIn, RemindOut), async (request) => {
    const { id, invoice_id } = request.params;
    const message = request.body.message ?? '';
    return writes.remindInvoiceInApp(deps, requireCaller(request).userId, id, invoice_id, message);
  });
  for (const decision of ['accept', 'decline'] as const) {
    app.post(path(decision), actionOptions(actionDocs[decision], EmptyIn, InvoiceOut), async (request) => {
      const { id, invoice_id } = request.params;
      return writes.decideQuoteInApp(deps, requireCaller(request).userId, id, invoice_id, decision);
    });
  }
}
