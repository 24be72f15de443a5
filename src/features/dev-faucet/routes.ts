import type { FastifyInstance } from 'fastify';
import { RenderedRefusal } from '../../platform/http/errors.ts';
import { routeDoc } from '../../platform/http/openapi.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { FaucetIn, FaucetOut } from './schemas.ts';
import { type FaucetDeps, fundFromFaucet } from './service.ts';

export type DevFaucetRouteDeps = FaucetDeps & { production: boolean };

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  fundFromFaucet: routeDoc({
    operationId: 'fundFromFaucet',
    summary: 'Fund an address on the local chain',
    description:
      'Development only (refused in production): mints test USDC and native gas to an address on the local anvil chain.',
    tags: ['Development'],
    errors: [404, 413, 415, 422],
  }),
};

/** POST /dev/faucet: a development rail, answered 404 when NODE_ENV=production. */
export function registerDevFaucetRoutes(server: FastifyInstance, deps: DevFaucetRouteDeps): void {
  const app = typedRoutes(server);
  app.post(
    '/dev/faucet',
    {
      schema: {
        ...docs.fundFromFaucet,
        body: FaucetIn,
        response: { 200: FaucetOut },
      },
    },
    async (request) => {
      if (deps.production) {
        throw new RenderedRefusal({
          status: 404,
          body: { error: 'not_found', detail: 'No route POST /dev/faucet.' },
        });
      }
      const outcome = await fundFromFaucet(deps, request.body);
      if (!outcome.ok) throw new RenderedRefusal({ status: 422, body: { detail: outcome.problems } });
      return outcome.value;
    },
  );
}
