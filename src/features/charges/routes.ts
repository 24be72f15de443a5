import type { FastifyInstance } from 'fastify';
import { assert } from '../../core/assert.ts';
import { parseAmountInput } from '../../core/money.ts';
import type { Db } from '../../platform/db/database.ts';
import { INTEGRATION_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
import { runAtomicWrite } from '../../platform/http/write.ts';
import { ChargeCreate, ChargeOut } from './schemas.ts';
import { type ChargesDeps, charge } from './service.ts';

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  createCharge: routeDoc({
    operationId: 'createCharge',
    summary: "Charge a call to a client's prepaid balance",
    description:
      "Charges one call of the seller's service to the named client's prepaid balance. Needs the payments scope and an Idempotency-Key: a retry with the same key answers the first result and never charges twice. When the balance cannot carry the amount nothing is booked and the answer is ok false with insufficient_balance and a top-up payment request (top_up.url) the client can pay; its balance page is at balance_url.",
    tags: ['Charges'],
    errors: INTEGRATION_WRITE_ERRORS,
  }),
};

function amountOf(value: number | string) {
  const parsed = parseAmountInput(value);
  assert(parsed.ok, 'The schema lets only valid amounts through.');
  return parsed.value;
}

export function registerChargeRoutes(server: FastifyInstance, deps: ChargesDeps & { db: Db }) {
  const app = typedRoutes(server);
  app.post(
    '/integration/charges',
    {
      config: { scope: 'payments', idempotent: true },
      schema: {
        ...docs.createCharge,
        body: ChargeCreate,
        response: { 200: ChargeOut },
      },
    },
    (request, reply) => {
      const body = request.body;
      const amounts = {
        price: amountOf(body.amount),
        topUp:
          body.top_up_amount === undefined || body.top_up_amount === null
            ? null
            : amountOf(body.top_up_amount),
      };
      return runAtomicWrite(deps, request, reply, 200, (db) =>
        charge(db, deps, requireCaller(request, 'integration'), body, amounts),
      );
    },
  );
}
