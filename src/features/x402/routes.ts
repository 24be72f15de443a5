import type { FastifyInstance } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { routeDoc } from '../../platform/http/openapi.ts';
import type { RateLimiter } from '../../platform/http/rate-limit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import type { KeyDoor } from '../keys/index.ts';
import { bazaarOf, listDiscoverable } from '../resources/index.ts';
import { type GatewayCaller, payToBucket, settle, supported, verify } from './gateway.ts';
import { DiscoveryOut, DiscoveryQuery, EnvelopeIn, SettleOut, SupportedOut, VerifyOut } from './schemas.ts';
import type { X402Deps } from './service.ts';

export type X402RouteDeps = X402Deps & { door: KeyDoor; limiter: RateLimiter };

/**
 * The caller behind a facilitator call: an integration key with `payments` scope pins the space
 * (and is rate-limited like any key); without one the call is rate-limited per pay-to address.
 */
async function callerOf(
  deps: X402RouteDeps,
  authorization: string | undefined,
  payTo: string,
): Promise<GatewayCaller> {
  if (authorization) {
    const { caller } = await deps.door.admit(authorization, 'payments');
    return { spaceId: caller.spaceId, keyId: caller.keyId };
  }
  const { decision } = await deps.limiter.hit({ keyId: payToBucket(payTo) });
  if (!decision.allowed) {
    throw new AppError(
      'rate_limited',
      `More than ${decision.limit} facilitator calls in a minute for this pay-to address.`,
      {
        retry_after_seconds: decision.resetSeconds,
        limit: decision.limit,
      },
    );
  }
  return undefined;
}

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  getSupportedX402: routeDoc({
    operationId: 'getSupportedX402',
    summary: 'List supported x402 schemes',
    description: 'Lists the schemes and networks this facilitator verifies and settles. Public.',
    tags: ['x402 facilitator'],
    errors: [429],
  }),
  listDiscoveryResources: routeDoc({
    operationId: 'listDiscoveryResources',
    summary: 'List findable resources',
    description:
      'The public discovery list: address and name of each endpoint card marked Findable, never volumes, payers or prices. Paged with limit and offset.',
    tags: ['x402 facilitator'],
    errors: [422, 429],
  }),
  verifyX402Payment: routeDoc({
    operationId: 'verifyX402Payment',
    summary: 'Verify an x402 payment',
    description:
      "Checks a payer's signed authorization against the payment requirements without moving money. Public; an oit_ key, when sent, files the result under its space.",
    tags: ['x402 facilitator'],
    errors: [401, 413, 415, 422, 429],
  }),
  settleX402Payment: routeDoc({
    operationId: 'settleX402Payment',
    summary: 'Settle an x402 payment',
    description:
      'Puts a verified authorization on chain, pays the gas and files the payment under the endpoint. An authorization is settled once; a replay is refused.',
    tags: ['x402 facilitator'],
    errors: [401, 409, 413, 415, 422, 429],
  }),
};

/** A Findable card as a discovery item: its bazaar extension when the card names a method. */
function discoveryItem(row: Awaited<ReturnType<typeof listDiscoverable>>['rows'][number]) {
  const bazaar = bazaarOf(row);
  return {
    resource: row.address,
    type: 'http',
    x402Version: 2,
    accepts: [],
    lastUpdated: row.created_at.toISOString(),
    description: row.description || row.name,
    ...(bazaar ? { extensions: { bazaar } } : {}),
  };
}

export function registerX402Routes(server: FastifyInstance, deps: X402RouteDeps): void {
  const app = typedRoutes(server);
  app.get(
    '/x402/supported',
    {
      schema: {
        ...docs.getSupportedX402,
        response: { 200: SupportedOut },
      },
    },
    async () => supported(deps),
  );
  // The public discovery list (x402 bazaar shape): Findable cards' address and name, never volumes,
  // payers or prices. `accepts` is empty: each resource quotes its own terms in its 402.
  app.get(
    '/x402/discovery/resources',
    {
      schema: {
        ...docs.listDiscoveryResources,
        querystring: DiscoveryQuery,
        response: { 200: DiscoveryOut },
      },
    },
    async (request, reply) => {
      const { query } = request;
      const limit = Number(query.limit ?? 20);
      const offset = Number(query.offset ?? 0);
      const page =
        query.type === undefined || query.type === 'http'
          ? await listDiscoverable(deps.db, limit, offset)
          : { rows: [], total: 0 };
      reply.header('access-control-allow-origin', '*');
      return {
        x402Version: 2,
        items: page.rows.map(discoveryItem),
        pagination: { limit, offset, total: page.total },
      };
    },
  );
  app.post(
    '/x402/verify',
    {
      schema: {
        ...docs.verifyX402Payment,
        body: EnvelopeIn,
        response: { 200: VerifyOut },
      },
    },
    async (request) =>
      verify(
        deps,
        request.body,
        await callerOf(deps, request.headers.authorization, request.body.paymentRequirements.payTo),
      ),
  );
  app.post(
    '/x402/settle',
    {
      schema: {
        ...docs.settleX402Payment,
        body: EnvelopeIn,
        response: { 200: SettleOut },
      },
    },
    async (request) =>
      settle(
        deps,
        request.body,
        await callerOf(deps, request.headers.authorization, request.body.paymentRequirements.payTo),
      ),
  );
}
