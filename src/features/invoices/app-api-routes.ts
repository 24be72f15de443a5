import type { FastifyInstance, FastifyRequest } from 'fastify';
import { APP_READ_ERRORS, APP_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import type { Static, TSchema } from '../../platform/http/schema-kit.ts';
import * as writes from './app-writes.ts';
import type { InvoicesDeps } from './index.ts';
import * as reads from './reads.ts';
import {
  EmptyIn,
  IntegrationInvoiceCreate,
  InvoiceListOut,
  InvoiceListQuery,
  InvoiceOut,
  InvoicePaymentCreate,
  RemindIn,
  RemindOut,
  SendIn,
  SpaceInvoiceParams,
  SpaceOnlyParams,
  VoidIn,
} from './schemas.ts';

// The app API of invoices, quotes and credit notes (/app/api/spaces/{id}/invoices…): what the
// Invoices screens do, for scripts too. Same bodies and answers as the integration routes;
// a session instead of a key, and the person's role instead of the key's scope.

const tags = ['Invoices'];
const WHO_WRITES = 'Owners, admins and members may; a viewer is refused (403).';

type ActionSpec = {
  operationId: string;
  summary: string;
  description: string;
  body: TSchema;
  response?: TSchema;
  run: (deps: InvoicesDeps, userId: string, spaceId: string, id: string, body: never) => Promise<unknown>;
};

const ACTIONS: Record<string, ActionSpec> = {
  send: {
    operationId: 'sendSpaceInvoice',
    summary: 'Send an invoice or a quote (via "none" marks it sent)',
    description: `Sends a draft invoice or quote by email (to client_email unless "to" is given, with the PDF attached and the public page linked), or with via "none" only marks it sent. Sending a sent one again delivers it again. Without a mail server the email road is refused (delivery_unavailable). ${WHO_WRITES}`,
    body: SendIn,
    run: (deps, userId, spaceId, id, body: Static<typeof SendIn>) =>
      writes.sendInvoiceInApp(deps, userId, spaceId, id, body),
  },
  payments: {
    operationId: 'recordSpaceInvoicePayment',
    summary: 'Record a payment against a sent or partial invoice',
    description: `Books a payment received outside Tollbook, in the invoice's currency, into the invoice's account (or account_id): the invoice becomes partial or paid, and invoice.paid fires once. More than is open is refused (amount_not_accepted); other states are refused (invoice_state). ${WHO_WRITES}`,
    body: InvoicePaymentCreate,
    run: (deps, userId, spaceId, id, body: Static<typeof InvoicePaymentCreate>) =>
      writes.recordPaymentInApp(deps, userId, spaceId, id, body),
  },
  void: {
    operationId: 'voidSpaceInvoice',
    summary: 'Void an invoice, quote or credit note (payments stay booked)',
    description: `Voids the document with an optional reason; payments already recorded stay booked, and a voided credit note gives its amount back to the invoice it corrected. Voiding a void one answers it as it is. ${WHO_WRITES}`,
    body: VoidIn,
    run: (deps, userId, spaceId, id, body: Static<typeof VoidIn>) =>
      writes.voidInvoiceInApp(deps, userId, spaceId, id, body.reason ?? ''),
  },
  remind: {
    operationId: 'remindSpaceInvoice',
    summary: 'Remind the client of a sent or partial invoice',
    description: `Mails a reminder to the client when mail is configured and the invoice has a client email, and records it either way (via lists the roads taken). Other states are refused (invoice_state). ${WHO_WRITES}`,
    body: RemindIn,
    response: RemindOut,
    run: (deps, userId, spaceId, id, body: Static<typeof RemindIn>) =>
      writes.remindInvoiceInApp(deps, userId, spaceId, id, body.message ?? ''),
  },
  accept: {
    operationId: 'acceptSpaceQuote',
    summary: 'Accept a sent quote (it becomes a draft invoice)',
    description: `Accepts a quote that was sent and is not past its due date: the quote reads quote_accepted and names, in invoice_id, the draft invoice made from it (same client, lines and totals, due in 14 days). Anything else is refused (invoice_state). ${WHO_WRITES}`,
    body: EmptyIn,
    run: (deps, userId, spaceId, id) => writes.decideQuoteInApp(deps, userId, spaceId, id, 'accept'),
  },
  decline: {
    operationId: 'declineSpaceQuote',
    summary: 'Decline a sent quote',
    description: `Declines a quote that was sent and is not past its due date; anything else is refused (invoice_state). ${WHO_WRITES}`,
    body: EmptyIn,
    run: (deps, userId, spaceId, id) => writes.decideQuoteInApp(deps, userId, spaceId, id, 'decline'),
  },
};

const idsOf = (request: FastifyRequest) => request.params as Static<typeof SpaceInvoiceParams>;

function registerReads(app: FastifyInstance, deps: InvoicesDeps) {
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
      reads.listInvoices(
        deps,
        request.session!.userId,
        (request.params as Static<typeof SpaceOnlyParams>).id,
        request.query as Static<typeof InvoiceListQuery>,
      ),
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
      reads.readInvoice(deps, request.session!.userId, idsOf(request).id, idsOf(request).invoice_id),
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
        request.session!.userId,
        idsOf(request).id,
        idsOf(request).invoice_id,
      );
      return reply
        .type('application/pdf')
        .header('content-disposition', `attachment; filename="${file.filename}"`)
        .send(file.body);
    },
  );
}

/** The app API of invoices: list, read, PDF, create, and each action a person may take. */
export function registerInvoiceDocumentAppRoutes(app: FastifyInstance, deps: InvoicesDeps) {
  registerReads(app, deps);
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
      const { id } = request.params as Static<typeof SpaceOnlyParams>;
      const body = request.body as Static<typeof IntegrationInvoiceCreate>;
      const created = await writes.createInvoiceInApp(deps, request.session!.userId, id, body);
      return reply.code(201).send(created);
    },
  );
  for (const [action, spec] of Object.entries(ACTIONS)) {
    app.post(
      `/app/api/spaces/:id/invoices/:invoice_id/${action}`,
      {
        schema: {
          ...routeDoc({ ...spec, tags, errors: APP_WRITE_ERRORS }),
          params: SpaceInvoiceParams,
          body: spec.body,
          response: { 200: spec.response ?? InvoiceOut },
        },
      },
      async (request) => {
        const { id, invoice_id } = idsOf(request);
        return spec.run(deps, request.session!.userId, id, invoice_id, (request.body ?? {}) as never);
      },
    );
  }
}
