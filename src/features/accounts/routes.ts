import type { FastifyInstance } from 'fastify';
import { INTEGRATION_READ_ERRORS, INTEGRATION_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
import { runWrite } from '../../platform/http/write.ts';
import { AccountCreate, AccountList, AccountListQuery, AccountOut } from './schemas.ts';
import * as service from './service.ts';

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  createAccount: routeDoc({
    operationId: 'createAccount',
    summary: 'Create an account',
    description:
      "Creates a money account (bank, card, cash, crypto or platform) in the key's space. Needs the accounts scope. A crypto account needs an address valid for its chain; the opening balance is booked as an opening entry dated opening_acquired_on. With an Idempotency-Key a retry answers the first result and creates nothing.",
    tags: ['Accounts'],
    errors: INTEGRATION_WRITE_ERRORS,
  }),
  listAccounts: routeDoc({
    operationId: 'listAccounts',
    summary: 'List accounts',
    description:
      "Lists the space's accounts with their derived balances, newest first. Needs the accounts scope.",
    tags: ['Accounts'],
    errors: INTEGRATION_READ_ERRORS,
  }),
};

export function registerAccountRoutes(server: FastifyInstance, deps: service.AccountsDeps) {
  const app = typedRoutes(server);
  app.post(
    '/integration/accounts',
    {
      config: { scope: 'accounts', idempotent: true },
      schema: {
        ...docs.createAccount,
        body: AccountCreate,
        response: { 201: AccountOut },
      },
    },
    (request, reply) =>
      runWrite(deps, request, reply, 201, (tx) =>
        service.createAccount(tx, deps.clock, requireCaller(request, 'integration'), request.body),
      ),
  );
  app.get(
    '/integration/accounts',
    {
      config: { scope: 'accounts' },
      schema: {
        ...docs.listAccounts,
        querystring: AccountListQuery,
        response: { 200: AccountList },
      },
    },
    async (request) => service.listAccounts(deps, requireCaller(request, 'integration'), request.query),
  );
}
