import type { FastifyInstance } from 'fastify';
import { assert } from '../../core/assert.ts';
import { parseAmountInput } from '../../core/money.ts';
import type { Db } from '../../platform/db/database.ts';
import { integrationRefusals } from '../../platform/http/schema-kit.ts';
import { runWrite } from '../../platform/http/write.ts';
import { ChargeCreate, ChargeOut } from './schemas.ts';
import { type ChargeInput, type ChargesDeps, charge } from './service.ts';

function amountOf(value: number | string) {
  const parsed = parseAmountInput(value);
  assert(parsed.ok, 'The schema lets only valid amounts through.');
  return parsed.value;
}

export function registerChargeRoutes(app: FastifyInstance, deps: ChargesDeps & { db: Db }) {
  app.post(
    '/integration/charges',
    {
      config: { scope: 'payments', idempotent: true },
      schema: {
        tags: ['integration'],
        summary: "Charge a call to a client's prepaid balance",
        body: ChargeCreate,
        response: { 200: ChargeOut, ...integrationRefusals },
      },
    },
    (request, reply) => {
      const body = request.body as ChargeInput;
      const amounts = {
        price: amountOf(body.amount),
        topUp:
          body.top_up_amount === undefined || body.top_up_amount === null
            ? null
            : amountOf(body.top_up_amount),
      };
      return runWrite(deps, request, reply, 200, (tx) =>
        charge(tx, deps, request.integration!, body, amounts),
      );
    },
  );
}
