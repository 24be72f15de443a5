import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import type { RateLimiter } from '../../platform/http/rate-limit.ts';
import type { Static } from '../../platform/http/schema-kit.ts';
import type { KeyDoor } from '../keys/index.ts';
import { type Envelope, type GatewayCaller, payToBucket, settle, supported, verify } from './gateway.ts';
import { EnvelopeIn, SettleOut, SupportedOut, VerifyOut } from './schemas.ts';
import type { X402Deps } from './service.ts';

export type X402RouteDeps = X402Deps & { door: KeyDoor; limiter: RateLimiter };

/**
 * The caller behind a facilitator call: an integration key with `payments` scope pins the space
 * (and is rate-limited like any key); without one the call is rate-limited per pay-to address.
 */
async function callerOf(deps: X402RouteDeps, request: FastifyRequest): Promise<GatewayCaller> {
  if (request.headers.authorization) {
    const { caller } = await deps.door.admit(request.headers.authorization, 'payments');
    return { spaceId: caller.spaceId, keyId: caller.keyId };
  }
  const payTo = (request.body as Static<typeof EnvelopeIn>).paymentRequirements.payTo;
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

export function registerX402Routes(app: FastifyInstance, deps: X402RouteDeps): void {
  const tags = ['x402 facilitator'];
  app.get('/x402/supported', { schema: { tags, response: { 200: SupportedOut } } }, async () =>
    supported(deps),
  );
  app.post(
    '/x402/verify',
    { schema: { tags, body: EnvelopeIn, response: { 200: VerifyOut } } },
    async (request) => verify(deps, request.body as Envelope, await callerOf(deps, request)),
  );
  app.post(
    '/x402/settle',
    { schema: { tags, body: EnvelopeIn, response: { 200: SettleOut } } },
    async (request) => settle(deps, request.body as Envelope, await callerOf(deps, request)),
  );
}
