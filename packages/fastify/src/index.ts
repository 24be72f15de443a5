import { type ChargePerCallOptions, chargeClient, chargeForCall, type Schemas } from '@tollbook/client';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';

export type { ChargePerCallOptions } from '@tollbook/client';

declare module 'fastify' {
  interface FastifyRequest {
    /** The charge of this call, set by chargePerCall before the handler runs. */
    tollbook?: Schemas['ChargeOut'];
  }
}

/**
 * A preHandler for one route (`{ preHandler: chargePerCall({...}) }`): charges the caller's
 * prepaid Tollbook balance before the handler runs, or answers 402 with `top_up.url` and
 * `balance_url` (401 when the caller is not named).
 */
export function chargePerCall(options: ChargePerCallOptions<FastifyRequest>): preHandlerAsyncHookHandler {
  const tollbook = chargeClient(options);
  return async function tollbookCharge(request: FastifyRequest, reply: FastifyReply) {
    const outcome = await chargeForCall(tollbook, options, request, {
      method: request.method,
      url: request.url,
      headers: request.headers,
    });
    if (outcome.ok) {
      request.tollbook = outcome.charge;
      return;
    }
    await reply.code(outcome.status).send(outcome.body);
  };
}

/**
 * The same as a plugin: every route registered inside it is charged per call.
 * `app.register(tollbookCharges, { ...options })` then `scope.get(...)` inside the plugin.
 */
export async function tollbookCharges(
  scope: FastifyInstance,
  options: ChargePerCallOptions<FastifyRequest> & {
    routes: (scope: FastifyInstance) => void | Promise<void>;
  },
) {
  scope.addHook('preHandler', chargePerCall(options));
  await options.routes(scope);
}
