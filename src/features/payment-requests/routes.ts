import type { FastifyInstance } from 'fastify';
import {
  APP_READ_ERRORS,
  APP_WRITE_ERRORS,
  INTEGRATION_READ_ERRORS,
  INTEGRATION_WRITE_ERRORS,
  routeDoc,
} from '../../platform/http/openapi.ts';
import { Type } from '../../platform/http/schema-kit.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
import { runWrite } from '../../platform/http/write.ts';
import { requireMember } from '../spaces/index.ts';
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

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  createPaymentRequest: routeDoc({
    operationId: 'createPaymentRequest',
    summary: 'Mint a payment request',
    description:
      'Mints a payment request for an amount in USDC on a network the space accepts, with a pay page at url. Needs the payments scope. With an Idempotency-Key a retry answers the first request instead of minting another. The request settles once: by an x402 payment, a direct transfer of the amount, a card, or by hand.',
    tags: ['Payment requests'],
    errors: INTEGRATION_WRITE_ERRORS,
  }),
  getPaymentRequest: routeDoc({
    operationId: 'getPaymentRequest',
    summary: 'Read a payment request',
    description:
      "Reads one payment request of the key's space by its token, with its status (active, paid or expired) and settlement. Needs the payments scope; a token of another space is not found.",
    tags: ['Payment requests'],
    errors: INTEGRATION_READ_ERRORS,
  }),
  markPaymentRequestPaid: routeDoc({
    operationId: 'markPaymentRequestPaid',
    summary: 'Mark a payment request paid by hand',
    description:
      'Settles an active request that was paid outside the chain (cash, bank). Owners and admins only; the request must still be active, and the money lands on the chosen account.',
    tags: ['Payment requests'],
    errors: APP_WRITE_ERRORS,
  }),
  cancelPaymentRequest: routeDoc({
    operationId: 'cancelPaymentRequest',
    summary: 'Cancel a payment request',
    description:
      "Cancels an active payment request of the key's space: it lapses now and reads cancelled, and takes no more payments. Cancelling a cancelled request answers it again; a paid request is 409 conflict. Needs the payments scope; a token of another space is not found.",
    tags: ['Payment requests'],
    errors: INTEGRATION_WRITE_ERRORS,
  }),
  cancelSpacePaymentRequest: routeDoc({
    operationId: 'cancelSpacePaymentRequest',
    summary: 'Cancel a payment request (app)',
    description:
      'Owners and admins cancel an active request of the space: it lapses now and reads cancelled. Cancelling a cancelled request answers it again; a paid request is 409 conflict.',
    tags: ['Payment requests'],
    errors: APP_WRITE_ERRORS,
  }),
};

export function registerPaymentRequestRoutes(server: FastifyInstance, deps: service.RequestsDeps) {
  const app = typedRoutes(server);
  app.post(
    '/integration/payment-requests',
    {
      config: { scope: 'payments', idempotent: true },
      schema: {
        ...docs.createPaymentRequest,
        body: PaymentRequestCreate,
        response: { 201: PaymentRequestOut },
      },
    },
    (request, reply) => {
      const body = request.body;
      const caller = requireCaller(request, 'integration');
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
        ...docs.getPaymentRequest,
        params: TokenParams,
        response: { 200: PaymentRequestOut },
      },
    },
    async (request) =>
      service.getRequest(deps, requireCaller(request, 'integration').spaceId, request.params.token),
  );
  app.post(
    '/integration/payment-requests/:token/cancel',
    {
      config: { scope: 'payments' },
      schema: {
        ...docs.cancelPaymentRequest,
        params: TokenParams,
        response: { 200: PaymentRequestOut },
      },
    },
    async (request) =>
      service.cancelRequest(deps, requireCaller(request, 'integration').spaceId, request.params.token),
  );
}

const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export function registerPaymentRequestAppRoutes(server: FastifyInstance, deps: service.RequestsDeps) {
  const app = typedRoutes(server);
  app.get(
    '/app/api/spaces/:id/payment-requests',
    {
      schema: {
        ...routeDoc({
          operationId: 'listSpacePaymentRequests',
          summary: 'List payment requests, newest first, 50 a page',
          description:
            'Lists the space’s payment requests to any member, newest first, 50 a page; status filters by active, paid or cancelled (an active request past its expiry is listed, and filtered, as cancelled). Send next_cursor back as cursor for the next page; a cursor this list did not give out is refused.',
          tags: ['Payment requests'],
          errors: APP_READ_ERRORS,
        }),
        params: SpaceParams,
        querystring: RequestListQuery,
        response: { 200: RequestListOut },
      },
    },
    async (request) => {
      const { id } = request.params;
      const member = await requireMember(deps.db, id, requireCaller(request).userId);
      return service.listRequests(deps, member, request.query);
    },
  );
  app.get(
    '/app/api/spaces/:id/payment-requests/:token',
    {
      schema: {
        ...routeDoc({
          operationId: 'getSpacePaymentRequest',
          summary: 'Read one payment request',
          description:
            'One payment request of the space by its token, to any member: its amount, what was received, its status and its pay page. A token of another space is not found.',
          tags: ['Payment requests'],
          errors: APP_READ_ERRORS,
        }),
        params: SpaceTokenParams,
        response: { 200: PaymentRequestOut },
      },
    },
    async (request) => {
      const { id, token } = request.params;
      const member = await requireMember(deps.db, id, requireCaller(request).userId);
      return service.getRequestInApp(deps, member, token);
    },
  );
  app.post(
    '/app/api/spaces/:id/payment-requests/:token/mark-paid',
    {
      schema: {
        ...docs.markPaymentRequestPaid,
        params: SpaceTokenParams,
        body: MarkPaidIn,
        response: { 200: PaymentRequestOut },
      },
    },
    async (request) => {
      const { id, token } = request.params;
      const member = await requireMember(deps.db, id, requireCaller(request).userId);
      return service.markPaid(deps, member, token, request.body);
    },
  );
  app.post(
    '/app/api/spaces/:id/payment-requests/:token/cancel',
    {
      schema: {
        ...docs.cancelSpacePaymentRequest,
        params: SpaceTokenParams,
        response: { 200: PaymentRequestOut },
      },
    },
    async (request) => {
      const { id, token } = request.params;
      const member = await requireMember(deps.db, id, requireCaller(request).userId);
      return service.cancelRequestInApp(deps, member, token);
    },
  );
}
