import type { FastifyInstance } from 'fastify';
import { integrationRefusals, type Static } from '../../platform/http/schema-kit.ts';
import { runWrite } from '../../platform/http/write.ts';
import { AccountCreate, AccountList, AccountListQuery, AccountOut } from './schemas.ts';
import * as service from './service.ts';

export function registerAccountRoutes(app: FastifyInstance, deps: service.AccountsDeps) {
  const tags = ['integration'];
  app.post(
    '/integration/accounts',
    {
      config: { scope: 'accounts', idempotent: true },
      schema: {
        tags,
        summary: 'Create an account',
        body: AccountCreate,
        response: { 201: AccountOut, ...integrationRefusals },
      },
    },
    (request, reply) =>
      runWrite(deps, request, reply, 201, (tx) =>
        service.createAccount(
          tx,
          deps.clock,
          request.integration!,
          request.body as service.AccountCreateInput,
        ),
      ),
  );
  app.get(
    '/integration/accounts',
    {
      config: { scope: 'accounts' },
      schema: {
        tags,
        summary: 'List accounts',
        querystring: AccountListQuery,
        response: { 200: AccountList, ...integrationRefusals },
      },
    },
    async (request) =>
      service.listAccounts(deps, request.integration!, request.query as Static<typeof AccountListQuery>),
  );
}
