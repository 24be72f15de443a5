import type { FastifyInstance } from 'fastify';
import { APP_READ_ERRORS, APP_WRITE_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { CursorPage, CursorParam, Type } from '../../platform/http/schema-kit.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
import { requireMember } from '../spaces/index.ts';
import { completeProof, type ProofsDeps, startProof } from './proofs.ts';
import { AccountCreate, AccountOut, AccountPatch } from './schemas.ts';
import { type AccountsDeps, createAccountInApp, listAccountsInApp, updateAccountInApp } from './service.ts';

const Params = Type.Object({
  id: Type.String({ format: 'uuid' }),
  account_id: Type.String({ format: 'uuid' }),
});
const ProofIn = Type.Object({
  signature: Type.Optional(
    Type.String({
      pattern: '^0x[0-9a-fA-F]{130}$',
      description: 'personal_sign of the challenge; omit to ask for one.',
    }),
  ),
});
const ProofOut = Type.Object({
  message: Type.Optional(Type.String({ description: 'The challenge to sign (when asked with {}).' })),
  expires_at: Type.Optional(Type.String({ format: 'date-time' })),
  proven: Type.Optional(Type.Boolean()),
  address: Type.Optional(Type.String()),
  proven_at: Type.Optional(Type.String({ format: 'date-time' })),
});

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  proveAccountAddress: routeDoc({
    operationId: 'proveAccountAddress',
    summary: "Prove control of a crypto account's address",
    description:
      "Sent with {} it answers a challenge to sign; sent with the personal_sign signature of that challenge it marks the account's address proven. Owners and admins only; a challenge expires and is used once.",
    tags: ['Accounts'],
    errors: APP_WRITE_ERRORS,
  }),
  listSpaceAccounts: routeDoc({
    operationId: 'listSpaceAccounts',
    summary: 'List a space’s accounts',
    description:
      'Lists the space’s accounts with their derived balances to any member, newest first, 50 a page: pass next_cursor back as cursor for the next page (null on the last).',
    tags: ['Accounts'],
    errors: APP_READ_ERRORS,
  }),
  createSpaceAccount: routeDoc({
    operationId: 'createSpaceAccount',
    summary: 'Create an account in a space',
    description:
      'Creates a money account (bank, card, cash, crypto or platform) in the space, for an owner, admin or member (not a viewer). The same rules as the integration call apply: a crypto account needs an address valid for its chain, and an opening balance is booked as an opening entry dated opening_acquired_on.',
    tags: ['Accounts'],
    errors: APP_WRITE_ERRORS,
  }),
  updateSpaceAccount: routeDoc({
    operationId: 'updateSpaceAccount',
    summary: 'Change an account',
    description:
      'Changes an account’s name, colour, details or bank requisites (sepa {iban, bic?, holder}, swift, uk, us_ach; IBAN mod-97, BIC shape, sort code and ABA routing checked; requisites: null removes them). Only bank accounts have requisites. Owners, admins and members.',
    tags: ['Accounts'],
    errors: APP_WRITE_ERRORS,
  }),
};

export function registerAccountAppRoutes(server: FastifyInstance, deps: ProofsDeps) {
  const app = typedRoutes(server);
  app.post(
    '/app/api/spaces/:id/accounts/:account_id/address-proof',
    {
      schema: {
        ...docs.proveAccountAddress,
        params: Params,
        body: ProofIn,
        response: { 200: ProofOut },
      },
    },
    async (request) => {
      const { id, account_id } = request.params;
      const { signature } = request.body;
      const userId = requireCaller(request).userId;
      return signature === undefined
        ? startProof(deps, userId, id, account_id)
        : completeProof(deps, userId, id, account_id, signature);
    },
  );
  registerAccountListRoutes(app, deps);
}

const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const AppAccountListQuery = Type.Object({ cursor: CursorParam });

/** The Accounts screen's reads and writes, for scripts: a session instead of a key. */
export function registerAccountListRoutes(server: FastifyInstance, deps: AccountsDeps) {
  const app = typedRoutes(server);
  app.get(
    '/app/api/spaces/:id/accounts',
    {
      schema: {
        ...docs.listSpaceAccounts,
        params: SpaceParams,
        querystring: AppAccountListQuery,
        response: { 200: CursorPage(AccountOut) },
      },
    },
    async (request) => {
      const { id } = request.params;
      const member = await requireMember(deps.db, id, requireCaller(request).userId);
      return listAccountsInApp(deps, member, request.query);
    },
  );
  app.post(
    '/app/api/spaces/:id/accounts',
    {
      schema: {
        ...docs.createSpaceAccount,
        params: SpaceParams,
        body: AccountCreate,
        response: { 201: AccountOut },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const member = await requireMember(deps.db, id, requireCaller(request).userId);
      const account = await createAccountInApp(deps, member, request.body);
      return reply.code(201).send(account);
    },
  );
  app.patch(
    '/app/api/spaces/:id/accounts/:account_id',
    {
      schema: {
        ...docs.updateSpaceAccount,
        params: Params,
        body: AccountPatch,
        response: { 200: AccountOut },
      },
    },
    async (request) => {
      const { id, account_id } = request.params;
      const member = await requireMember(deps.db, id, requireCaller(request).userId);
      return updateAccountInApp(deps, member, account_id, request.body);
    },
  );
}
