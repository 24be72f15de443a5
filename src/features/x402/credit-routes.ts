import type { FastifyInstance } from 'fastify';
import { assert } from '../../core/assert.ts';
import { parseAmountInput } from '../../core/money.ts';
import { INTEGRATION_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
import { runWrite } from '../../platform/http/write.ts';
import { ChargeOut } from '../charges/index.ts';
import { type CreditDeps, chargeSignedIn } from './credit.ts';
import { CreditCallIn } from './schemas.ts';

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  chargeSignedInCall: routeDoc({
    operationId: 'chargeSignedInCall',
    summary: "Charge an x402 call to the signed-in payer's credit",
    description:
      "For a seller's x402 middleware whose 402 declares sign-in-with-x: charges one call to the prepaid credit of the address that signed sign_in (client_ref evm: and the address in lowercase). Needs the payments scope; an Idempotency-Key makes a retry answer the first result. The sign-in is checked by the extension (domain and URI bound to the resource's origin, at most five minutes old, the signature) and accepted once per book: a replay is 409 conflict with reason invalid_siwx_nonce, a refused sign-in 422 invalid_request with the extension's reason. A credit that cannot carry the price answers paid false and nothing is booked: serve the x402 payment instead.",
    tags: ['Charges'],
    errors: INTEGRATION_WRITE_ERRORS,
  }),
};

export function registerX402CreditRoutes(server: FastifyInstance, deps: CreditDeps) {
  const app = typedRoutes(server);
  app.post(
    '/integration/x402/credit-calls',
    {
      config: { scope: 'payments', idempotent: true },
      schema: { ...docs.chargeSignedInCall, body: CreditCallIn, response: { 200: ChargeOut } },
    },
    (request, reply) => {
      const price = parseAmountInput(request.body.amount);
      assert(price.ok, 'The schema lets only valid amounts through.');
      const caller = requireCaller(request, 'integration');
      return runWrite(deps, request, reply, 200, (tx) =>
        chargeSignedIn(tx, deps, caller, request.body, price.value),
      );
    },
  );
}
