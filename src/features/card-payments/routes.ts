import type { FastifyInstance } from 'fastify';
import { WebhookReceivedOut } from './schemas.ts';
import * as service from './service.ts';

/** Stripe's limit on an event's size is far below this; a larger body is not Stripe's. */
const STRIPE_EVENT_BYTES_MAX = 256 * 1024;

/**
 * `POST /stripe/webhook`: Stripe's events for the card rail. The signature covers the exact
 * bytes Stripe sent, so this route reads its body raw (never parsed and re-serialized).
 */
export function registerStripeWebhookRoute(app: FastifyInstance, deps: service.CardPaymentsDeps) {
  return app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit: STRIPE_EVENT_BYTES_MAX },
      (_request, body, done) => done(null, body),
    );
    scope.post(
      '/stripe/webhook',
      { schema: { hide: true, response: { 200: WebhookReceivedOut } } },
      async (request) => {
        const signature = request.headers['stripe-signature'];
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        return service.receiveStripeEvent(deps, body, typeof signature === 'string' ? signature : undefined);
      },
    );
  });
}
