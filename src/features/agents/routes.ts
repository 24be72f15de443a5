import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { APP_READ_ERRORS, APP_WRITE_ERRORS, routeDoc, UPSTREAM_ERRORS } from '../../platform/http/openapi.ts';
import type { RateLimiter } from '../../platform/http/rate-limit.ts';
import { type TSchema, Type } from '../../platform/http/schema-kit.ts';
import { requireCaller, type TypedApp, typedRoutes } from '../../platform/http/typed.ts';
import { type AgentAdmission, createAgentDoor, describeAgent } from './door.ts';
import { WRITE_KINDS } from './kinds.ts';
import { type AgentCall, createAgentMcpServer } from './mcp.ts';
import {
  AgentChainPaymentIn,
  AgentGrantChangeIn,
  AgentIssue,
  AgentIssued,
  AgentList,
  AgentMeOut,
  AgentOut,
  AgentParams,
  AgentPaymentIn,
  AgentSpaceParams,
  AgentStatusIn,
  AgentTxIn,
  AgentTxParams,
  AgentTxPatch,
  AgentWalletOut,
  AgentWalletTransferIn,
  AgentWriteOut,
  AgentX402In,
  CardIntentList,
  CardIntentOpenIn,
  CategoryIn,
  CategoryList,
  CategoryOut,
  ProposalList,
  ProposalOut,
  ProposalParams,
  ProposalQuery,
  RejectIn,
} from './schemas.ts';
import * as service from './service.ts';
import { transferFromWallet, walletBalances } from './wallet.ts';
import { runAgentWrite } from './writes.ts';
import { fetchWithX402, type X402FetchDeps } from './x402-fetch.ts';

const TAGS = ['Agents'];
const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
/** What every /agent route can answer: the token door, the rule table's refusals and body rules. */
const AGENT_WRITE_ERRORS = [401, 403, 404, 413, 415, 422, 429] as const;

const doc = (operationId: string, summary: string, description: string, errors = APP_WRITE_ERRORS) =>
  routeDoc({ operationId, summary, description, tags: TAGS, errors });

const userOf = (request: FastifyRequest) => requireCaller(request).userId;

function registerAgentAdmin(app: TypedApp, deps: service.AgentsDeps) {
  app.post(
    '/app/api/spaces/:id/agents',
    {
      schema: {
        ...doc(
          'issueAgent',
          'Issue an agent',
          'Owners and admins issue an agent with perms, an optional account restriction and a fence (x402 hosts, allowed merchants, USD caps per request and per day, expiry). The oat_ token is in this answer only (the server keeps its SHA-256). The agent starts observing: every write it makes waits as a proposal until an owner makes it active. Its hot wallet address is shown for funding; the wallet key never leaves the server.',
        ),
        params: SpaceParams,
        body: AgentIssue,
        response: { 201: AgentIssued },
      },
    },
    async (request, reply) => {
      const issued = await service.issueAgent(deps, userOf(request), request.params.id, request.body);
      return reply.code(201).header('cache-control', 'no-store').send(issued);
    },
  );
  app.get(
    '/app/api/spaces/:id/agents',
    {
      schema: {
        ...doc(
          'listAgents',
          'List agents',
          'Lists the space’s agents with status, perms and fence; never a token.',
          APP_READ_ERRORS,
        ),
        params: SpaceParams,
        response: { 200: AgentList },
      },
    },
    async (request) => ({ items: await service.listAgents(deps, userOf(request), request.params.id) }),
  );
  app.patch(
    '/app/api/spaces/:id/agents/:aid',
    {
      schema: {
        ...doc(
          'setAgentStatus',
          'Move an agent’s status',
          'Owners and admins move an agent: observing → active, any → frozen, frozen → observing. A frozen agent’s writes answer 403 agent_frozen. Other moves answer 422.',
        ),
        params: AgentParams,
        body: AgentStatusIn,
        response: { 200: AgentOut },
      },
    },
    async (request) => {
      const { id, aid } = request.params;
      return service.setAgentStatus(deps, userOf(request), id, aid, request.body.status);
    },
  );
}

function registerAgentRevoke(app: TypedApp, deps: service.AgentsDeps) {
  app.delete(
    '/app/api/spaces/:id/agents/:aid',
    {
      schema: {
        ...doc(
          'revokeAgent',
          'Revoke an agent',
          'Revokes the agent’s token at once: its next call answers 401.',
          APP_READ_ERRORS,
        ),
        params: AgentParams,
        response: { 200: AgentOut },
      },
    },
    async (request) => {
      const { id, aid } = request.params;
      return service.revokeAgent(deps, userOf(request), id, aid);
    },
  );
}

function registerProposalRoutes(app: TypedApp, deps: service.AgentsDeps) {
  app.get(
    '/app/api/spaces/:id/proposals',
    {
      schema: {
        ...doc(
          'listProposals',
          'List agent proposals',
          'Lists agent writes, newest first (100 at most): pending proposals by default; `status` picks applied, approved, rejected or lapsed ones.',
          APP_READ_ERRORS,
        ),
        params: SpaceParams,
        querystring: ProposalQuery,
        response: { 200: ProposalList },
      },
    },
    async (request) => {
      const { status } = request.query;
      return { items: await service.listProposals(deps, userOf(request), request.params.id, status) };
    },
  );
  app.post(
    '/app/api/spaces/:id/proposals/:pid/approve',
    {
      schema: {
        ...doc(
          'approveProposal',
          'Approve a proposal',
          'An owner or admin applies a pending proposal with themselves as the actor (the agent stays named on it); the answer carries the result. A payment still passes approval rules, policy rules and screening. A hot-wallet transfer or an x402 fetch is claimed first (status approving), then sent or fetched from the agent’s wallet (an x402 fetch pays at most the quote the proposal recorded, else the agent’s per_request_usd); it does not count against the agent’s daily cap. If the chain refuses it or the fetch fails, the proposal goes back to pending with the failure in result and the answer is 502 transfer_failed. A decided, lapsed or approving proposal answers 422 proposal_state; a revoked agent’s proposal 409 conflict.',
          [...APP_WRITE_ERRORS, ...UPSTREAM_ERRORS],
        ),
        params: ProposalParams,
        response: { 200: ProposalOut },
      },
    },
    async (request) => {
      const { id, pid } = request.params;
      return service.approveProposal(deps, userOf(request), id, pid);
    },
  );
  app.post(
    '/app/api/spaces/:id/proposals/:pid/reject',
    {
      schema: {
        ...doc(
          'rejectProposal',
          'Reject a proposal',
          'An owner or admin rejects a pending proposal with a reason, which is recorded.',
        ),
        params: ProposalParams,
        body: RejectIn,
        response: { 200: ProposalOut },
      },
    },
    async (request) => {
      const { id, pid } = request.params;
      return service.rejectProposal(deps, userOf(request), id, pid, request.body.reason);
    },
  );
}

function registerCategoryRoutes(app: TypedApp, deps: service.AgentsDeps) {
  app.get(
    '/app/api/spaces/:id/categories',
    {
      schema: {
        ...doc(
          'listCategories',
          'List categories',
          'The space’s categories for book rows, by kind and name.',
          APP_READ_ERRORS,
        ),
        params: SpaceParams,
        response: { 200: CategoryList },
      },
    },
    async (request) => ({ items: await service.listCategories(deps, userOf(request), request.params.id) }),
  );
  app.post(
    '/app/api/spaces/:id/categories',
    {
      schema: {
        ...doc(
          'createCategory',
          'Add a category',
          'Owners, admins and members add a category {name, kind}; the same name and kind again answers the existing one.',
        ),
        params: SpaceParams,
        body: CategoryIn,
        response: { 201: CategoryOut },
      },
    },
    async (request, reply) => {
      return reply
        .code(201)
        .send(await service.createCategory(deps, userOf(request), request.params.id, request.body));
    },
  );
}

function registerCardIntentList(app: TypedApp, deps: service.AgentsDeps) {
  app.get(
    '/app/api/spaces/:id/card-intents',
    {
      schema: {
        ...doc(
          'listCardIntents',
          'List card intents',
          'The card payments the space’s agents declared, newest first (100 at most), with the book rows matched to each.',
          APP_READ_ERRORS,
        ),
        params: SpaceParams,
        response: { 200: CardIntentList },
      },
    },
    async (request) => ({ items: await service.listCardIntents(deps, userOf(request), request.params.id) }),
  );
}

export function registerAgentAppRoutes(server: FastifyInstance, deps: service.AgentsDeps) {
  const app = typedRoutes(server);
  registerAgentAdmin(app, deps);
  registerCardIntentList(app, deps);
  registerAgentRevoke(app, deps);
  registerProposalRoutes(app, deps);
  registerCategoryRoutes(app, deps);
}

// ---- The agent API, behind Bearer oat_ ----

declare module 'fastify' {
  interface FastifyRequest {
    agent?: AgentAdmission;
  }
}

/** The agent the door admitted; a route reached without one answers 401, never a crash. */
const admissionOf = (request: FastifyRequest) => {
  if (!request.agent)
    throw new AppError('unauthorized', 'Send the agent token as Authorization: Bearer oat_….');
  return request.agent;
};

type AgentRouteDeps = X402FetchDeps & { limiter: RateLimiter };

/** The OpenAPI part of an agent write: every one answers AgentWriteOut through the rule table. */
function writeSchema<B extends TSchema, P extends TSchema>(
  route: { id: string; summary: string; text: string },
  body: B,
  params: P,
) {
  return {
    ...doc(
      route.id,
      route.summary,
      `${route.text} Frozen: 403 agent_frozen; a missing perm: 403 missing_perm.`,
      AGENT_WRITE_ERRORS,
    ),
    params,
    body,
    response: { 200: AgentWriteOut },
  };
}

const NO_PARAMS = Type.Object({});

/** The agent writes of one space: each goes through the rule table and answers AgentWriteOut. */
function registerSpaceWrites(app: TypedApp, deps: AgentRouteDeps) {
  const callerOf = (request: FastifyRequest) => admissionOf(request).caller;
  app.post(
    '/agent/spaces/:space_id/payments',
    {
      schema: writeSchema(
        {
          id: 'agentCreatePayment',
          summary: 'Pay (a payment out)',
          text: 'A payment out of one of the space’s accounts (rail book), made by the agent: the same approval rules, policy rules and screening as a person’s payment. Applied inside the fence when the agent is active; otherwise a proposal.',
        },
        AgentPaymentIn,
        AgentSpaceParams,
      ),
    },
    (request) =>
      runAgentWrite(deps, callerOf(request), request.params.space_id, WRITE_KINDS.payment, request.body),
  );
  app.post(
    '/agent/spaces/:space_id/transactions',
    {
      schema: writeSchema(
        {
          id: 'agentCreateTransaction',
          summary: 'Book a row',
          text: 'Books an income or expense row (origin manual) on one account, with an optional category. A transfer needs two accounts and is refused (a person makes it).',
        },
        AgentTxIn,
        AgentSpaceParams,
      ),
    },
    (request) =>
      runAgentWrite(deps, callerOf(request), request.params.space_id, WRITE_KINDS.transaction, request.body),
  );
  app.post(
    '/agent/spaces/:space_id/chain-payments',
    {
      schema: writeSchema(
        {
          id: 'agentCreateChainPayment',
          summary: 'Prepare a chain payment',
          text: 'Puts forward an on-chain payment out of a crypto account for a person to sign in the app (rail chain). The fence counts it like a payment.',
        },
        AgentChainPaymentIn,
        AgentSpaceParams,
      ),
    },
    (request) =>
      runAgentWrite(
        deps,
        callerOf(request),
        request.params.space_id,
        WRITE_KINDS.chain_payment,
        request.body,
      ),
  );
  app.patch(
    '/agent/spaces/:space_id/transactions/:id',
    {
      schema: writeSchema(
        {
          id: 'agentPatchTransaction',
          summary: 'Correct a booked row',
          text: 'Changes only the category, note or payee of a row an agent filed; amounts and dates never change.',
        },
        AgentTxPatch,
        AgentTxParams,
      ),
    },
    (request) =>
      runAgentWrite(deps, callerOf(request), request.params.space_id, WRITE_KINDS.transaction_patch, {
        ...request.body,
        id: request.params.id,
      }),
  );
}

/** The agent writes that name no space: the agent's own. */
function registerOwnWrites(app: TypedApp, deps: AgentRouteDeps) {
  const callerOf = (request: FastifyRequest) => admissionOf(request).caller;
  app.post(
    '/agent/card-intents',
    {
      schema: writeSchema(
        {
          id: 'agentOpenCardIntent',
          summary: 'Declare a card payment',
          text: 'Declares a card payment before the agent’s card makes it (merchant, purpose, ceiling in USD). Applied: result {intent_id, status: "open"}. A later expense row booked by an agent whose payee is the merchant is matched to it; one over the ceiling notifies the owners.',
        },
        CardIntentOpenIn,
        NO_PARAMS,
      ),
    },
    (request) => {
      const caller = callerOf(request);
      return runAgentWrite(deps, caller, caller.spaceId, WRITE_KINDS.card_intent, request.body);
    },
  );
  app.post(
    '/agent/grant-changes',
    {
      schema: writeSchema(
        {
          id: 'agentRequestGrantChange',
          summary: 'Ask for a different fence',
          text: 'Asks the owner to change the agent’s fence (merchants, x402 hosts, daily cap, expiry): always a proposal, applied when a person approves it.',
        },
        AgentGrantChangeIn,
        NO_PARAMS,
      ),
    },
    (request) => {
      const caller = callerOf(request);
      return runAgentWrite(deps, caller, caller.spaceId, WRITE_KINDS.grant_change, request.body);
    },
  );
}

const IDEMPOTENCY_KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const raw = request.headers['idempotency-key'];
  if (raw === undefined) return undefined;
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || !IDEMPOTENCY_KEY_SHAPE.test(value)) {
    throw new AppError('invalid_request', 'Idempotency-Key must be 1 to 255 printable ASCII characters.', {
      header: 'Idempotency-Key',
    });
  }
  return value;
}

function registerWalletRoutes(app: TypedApp, deps: AgentRouteDeps) {
  app.get(
    '/agent/wallet',
    {
      schema: {
        ...doc(
          'agentWallet',
          'Read the hot wallet',
          'The agent’s own wallet address and its balances, read from the chain on every configured network. A node that cannot be asked answers 503 service_unavailable (retry), never a zero balance.',
          [401, 429, 503],
        ),
        response: { 200: AgentWalletOut },
      },
    },
    async (request) => walletBalances(deps, admissionOf(request).caller),
  );
  app.post(
    '/agent/wallet/transfers',
    {
      schema: {
        ...doc(
          'agentWalletTransfer',
          'Send from the hot wallet',
          'Sends a token from the agent’s wallet: an authorization signed with the agent’s key, put on chain by the server’s gas wallet (one transaction per call). Inside the fence (payee, or the destination address, among allowed_merchants; per-request and daily caps) it applies and books money.out on the agent wallet’s account; otherwise a proposal. The destination is screened. Idempotency-Key: a retry answers the first result; another body with the same key answers 422. The chain refusing the transfer answers 502 transfer_failed and spends nothing.',
          [...AGENT_WRITE_ERRORS, 409, ...UPSTREAM_ERRORS],
        ),
        body: AgentWalletTransferIn,
        response: { 200: AgentWriteOut },
      },
    },
    async (request) =>
      transferFromWallet(deps, admissionOf(request).caller, request.body, idempotencyKeyOf(request)),
  );
}

function registerX402Fetch(app: TypedApp, deps: AgentRouteDeps) {
  app.post(
    '/agent/x402',
    {
      schema: {
        ...doc(
          'agentX402Fetch',
          'Fetch a URL, paying x402',
          'Fetches the URL (public https; loopback only with the development switch; no redirects followed) and, when it answers 402, pays from the agent’s hot wallet with the official x402 client. The host must be in x402_hosts and the quote must fit per_request_usd and what is left of daily_usd (checked under a lock); otherwise a proposal and nothing is paid. result: {status, content_type, body (at most 64 KiB), paid: {amount, asset, network, tx_hash} | null}.',
          [...AGENT_WRITE_ERRORS, ...UPSTREAM_ERRORS],
        ),
        body: AgentX402In,
        response: { 200: AgentWriteOut },
      },
    },
    async (request) => fetchWithX402(deps, admissionOf(request), request.body.url),
  );
}

/** The agent API as MCP tools over streamable HTTP (stateless: one server per request). */
function registerMcpRoute(app: TypedApp) {
  app.post(
    '/agent/mcp',
    {
      schema: {
        ...doc(
          'agentMcp',
          'MCP (streamable HTTP)',
          'The agent API as Model Context Protocol tools (JSON-RPC over streamable HTTP, stateless). Each tool is an agent route with that route’s input schema; a tool call runs the route with the same token, so the same door, validation and rule table answer it.',
          [401, 413, 415, 429],
        ),
      },
    },
    async (request, reply) => {
      const authorization = request.headers.authorization ?? '';
      const call: AgentCall = async (method, path, body) => {
        const res = await request.server.inject({
          method,
          url: path,
          headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
        });
        return { status: res.statusCode, body: JSON.parse(res.body || 'null') as unknown };
      };
      const server = createAgentMcpServer(call);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );
}

export function registerAgentRoutes(app: FastifyInstance, deps: AgentRouteDeps) {
  const door = createAgentDoor(deps);
  return app.register(async (plain) => {
    const scope = typedRoutes(plain);
    scope.addHook('onRequest', async (request, reply) => {
      const admission = await door.admit(request.headers.authorization);
      request.agent = admission;
      reply.header('ratelimit-limit', String(admission.rate.limit));
      reply.header('ratelimit-remaining', String(admission.rate.remaining));
      reply.header('ratelimit-reset', String(admission.rate.resetSeconds));
    });
    scope.get(
      '/agent/me',
      {
        schema: {
          ...doc(
            'agentMe',
            'Who am I',
            'The agent, its status, its owner and the space it acts in, with account addresses masked to their last four characters.',
            [401, 429],
          ),
          response: { 200: AgentMeOut },
        },
      },
      async (request) => describeAgent(deps.db, admissionOf(request)),
    );
    registerSpaceWrites(scope, deps);
    registerOwnWrites(scope, deps);
    registerWalletRoutes(scope, deps);
    registerX402Fetch(scope, deps);
    registerMcpRoute(scope);
  });
}
