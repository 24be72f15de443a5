import type { FastifyInstance } from 'fastify';
import { integrationRefusals, type Static, Type } from '../../platform/http/schema-kit.ts';
import { runWrite } from '../../platform/http/write.ts';
import {
  MarkPaidIn,
  PaymentRequestCreate,
  PaymentRequestOut,
  RequestListOut,
  RequestListQuery,
  SpaceTokenParams,
  TokenParams,
} from './schemas.ts';
import * as service from './service.ts';

export function registerPaymentRequestRoutes(app: FastifyInstance, deps: service.RequestsDeps) {
  const tags = ['integration'];
  app.post(
    '/integration/payment-requests',
    {
      config: { scope: 'payments', idempotent: true },
      schema: {
        tags,
        summary: 'Mint a payment request',
        body: PaymentRequestCreate,
        response: { 201: PaymentRequestOut, ...integrationRefusals },
      },
    },
    (request, reply) => {
      const body = request.body as Static<typeof PaymentRequestCreate>;
      const caller = request.integration!;
      return runWrite(deps, request, reply, 201, (tx) =>
        service.mintRequest(tx, deps, {
          spaceId: caller.spaceId,
          keyId: caller.keyId,
          accountId: body.account_id,
          amount: service.parseAmount(body.amount),
          currency: body.currency ?? null,
          expiresAt: body.expires_at ?? null,
          memo: body.memo ?? '',
          resource: body.resource ?? '',
        }),
      );
    },
  );
  app.get(
    '/integration/payment-requests/:token',
    {
      config: { scope: 'payments' },
      schema: {
        tags,
        summary: 'Read a payment request',
        params: TokenParams,
        response: { 200: PaymentRequestOut, ...integrationRefusals },
      },
    },
    async (request) =>
      service.getRequest(
        deps,
        request.integration!.spaceId,
        (request.params as Static<typeof TokenParams>).token,
      ),
  );
}

const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export function registerPaymentRequestAppRoutes(app: FastifyInstance, deps: service.RequestsDeps) {
  app.get(
    '/app/api/spaces/:id/payment-requests',
    {
      schema: {
        tags: ['app'],
        summary: 'List payment requests, newest first, 50 a page',
        params: SpaceParams,
        querystring: RequestListQuery,
        response: { 200: RequestListOut },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof SpaceParams>;
      return service.listRequests(
        deps,
        request.session!.userId,
        id,
        request.query as Static<typeof RequestListQuery>,
      );
    },
  );
  app.post(
    '/app/api/spaces/:id/payment-requests/:token/mark-paid',
    {
      schema: {
        tags: ['app'],
        params: SpaceTokenParams,
        body: MarkPaidIn,
        response: { 200: PaymentRequestOut },
      },
    },
    async (request) => {
      const { id, token } = request.params as Static<typeof SpaceTokenParams>;
      return service.markPaid(
        deps,
        request.session!.userId,
        id,
        token,
        request.body as Static<typeof MarkPaidIn>,
      );
    },
  );
}
