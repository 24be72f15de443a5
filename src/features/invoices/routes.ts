import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Queryable } from '../../platform/db/database.ts';
import { integrationRefusals, type Static, type TSchema } from '../../platform/http/schema-kit.ts';
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

const tags = ['integration'];
const config = { scope: 'invoices' as const, idempotent: true };

type Action = (tx: Queryable, spaceId: string, id: string, body: never) => Promise<unknown>;

/** One POST /integration/invoices/{id}/<action> route: schema → service in runWrite → reply. */
function invoiceAction(
  app: FastifyInstance,
  deps: service.InvoicesDeps,
  action: string,
  spec: { summary: string; body: TSchema; response?: TSchema; run: Action },
) {
  app.post(
    `/integration/invoices/:id/${action}`,
    {
      config,
      schema: {
        tags,
        summary: spec.summary,
        params: IdParams,
        body: spec.body,
        response: { 200: spec.response ?? InvoiceOut, ...integrationRefusals },
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
        tags,
        summary: 'Mirror an invoice into the space',
        body: IntegrationInvoiceCreate,
        response: { 201: InvoiceOut, ...integrationRefusals },
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
        tags,
        summary: 'Read an invoice',
        params: IdParams,
        response: { 200: InvoiceOut, ...integrationRefusals },
      },
    },
    (request) =>
      service.getInvoice(deps, request.integration!.spaceId, (request.params as Static<typeof IdParams>).id),
  );
  invoiceAction(app, deps, 'seller', {
    summary: "Set the issuer's requisites for one invoice",
    body: SellerOverride,
    run: (tx, spaceId, id, body: SellerBody) => service.setParty(tx, deps, spaceId, id, { seller: body }),
  });
  invoiceAction(app, deps, 'client', {
    summary: "Set the client's requisites for one invoice",
    body: ClientOverride,
    run: (tx, spaceId, id, body: Static<typeof ClientOverride>) =>
      service.setParty(tx, deps, spaceId, id, { client: body }),
  });
  invoiceAction(app, deps, 'send', {
    summary: 'Send an invoice (via "none" marks it sent)',
    body: SendIn,
    run: (tx, spaceId, id, body: Static<typeof SendIn>) => service.sendInvoice(tx, deps, spaceId, id, body),
  });
  invoiceAction(app, deps, 'payments', {
    summary: 'Record a payment against a sent or partial invoice',
    body: InvoicePaymentCreate,
    run: (tx, spaceId, id, body: Static<typeof InvoicePaymentCreate>) =>
      service.recordPayment(tx, deps, spaceId, id, body),
  });
  invoiceAction(app, deps, 'void', {
    summary: 'Void an invoice (payments stay booked)',
    body: VoidIn,
    run: (tx, spaceId, id, body: Static<typeof VoidIn>) =>
      service.voidInvoice(tx, deps, spaceId, id, body.reason ?? ''),
  });
  for (const decision of ['accept', 'decline'] as const) {
    invoiceAction(app, deps, decision, {
      summary: `${decision === 'accept' ? 'Accept' : 'Decline'} a sent quote`,
      body: EmptyIn,
      run: (tx, spaceId, id) => service.decideQuote(tx, deps, spaceId, id, decision),
    });
  }
  invoiceAction(app, deps, 'remind', {
    summary: 'Record a reminder for a sent or partial invoice',
    body: RemindIn,
    response: RemindOut,
    run: (tx, spaceId, id, body: Static<typeof RemindIn>) =>
      service.remindInvoice(tx, deps, spaceId, id, body.message ?? ''),
  });
}
