import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import type { Plugin } from 'ajv';
import ajvFormats from 'ajv-formats';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Clock } from './core/clock.ts';
import { AppError } from './core/errors.ts';
import {
  registerAccountAppRoutes,
  registerAccountPages,
  registerAccountRoutes,
  registerLedgerAppRoutes,
  registerLedgerPages,
} from './features/accounts/index.ts';
import {
  type AgentsDeps,
  registerAgentAppRoutes,
  registerAgentPages,
  registerAgentRoutes,
} from './features/agents/index.ts';
import { loadViewer, registerShellPages } from './features/app-shell/index.ts';
import { registerStripeWebhookRoute, stripeGateway } from './features/card-payments/index.ts';
import { registerChargeRoutes } from './features/charges/index.ts';
import {
  type ChatSetup,
  invoiceChatPort,
  registerChatAppRoutes,
  registerChatPages,
  registerChatRoutes,
  registerTelegramWebhook,
  setUpChat,
} from './features/chat/index.ts';
import { registerClientCreditPages, registerClientCreditRoutes } from './features/client-credits/index.ts';
import {
  registerContactAppRoutes,
  registerContactPages,
  registerContactRoutes,
} from './features/contacts/index.ts';
import { registerDevFaucetRoutes } from './features/dev-faucet/index.ts';
import { recordGasBalances } from './features/gas-wallets/index.ts';
import { registerHomePages } from './features/home/index.ts';
import {
  registerInvoiceAppRoutes,
  registerInvoiceDocumentAppRoutes,
  registerInvoicePages,
  registerInvoiceRoutes,
} from './features/invoices/index.ts';
import {
  createKeyDoor,
  registerKeyPages,
  registerKeyRoutes,
  registerPingRoute,
} from './features/keys/index.ts';
import { registerNotificationPages, registerNotificationRoutes } from './features/notifications/index.ts';
import { registerPageRoutes } from './features/pages/index.ts';
import {
  registerPaymentRequestAppRoutes,
  registerPaymentRequestPages,
  registerPaymentRequestRoutes,
} from './features/payment-requests/index.ts';
import { registerPayoutPages, registerPayoutRoutes } from './features/payouts/index.ts';
import { registerPushAppRoutes, registerPushPages, registerPushRoutes } from './features/push/index.ts';
import { registerReceiptRoutes } from './features/receipts/index.ts';
import {
  registerEndpointAppRoutes,
  registerEndpointIntegrationRoutes,
  registerIncomeAppRoutes,
  registerResourcePages,
} from './features/resources/index.ts';
import { configureScreening, screeningGauges } from './features/screening/index.ts';
import { registerSiteAppRoutes, registerSitePages } from './features/sites/index.ts';
import {
  registerInvitationPages,
  registerInvitationRoutes,
  registerSpacePages,
  registerSpaceRoutes,
} from './features/spaces/index.ts';
import {
  createSessionGuard,
  registerPasswordResetPages,
  registerPasswordResetRoutes,
  registerSessionRoutes,
  registerUserPages,
  registerUserRoutes,
} from './features/users/index.ts';
import { registerSubscriptionPages, registerWebhookRoutes } from './features/webhooks/index.ts';
import {
  createFacilitator,
  followPendingSettlements,
  registerX402CreditRoutes,
  registerX402Routes,
} from './features/x402/index.ts';
import type { AuthStamps } from './platform/auth-stamps.ts';
import type { Chain } from './platform/chain/chain.ts';
import type { Config } from './platform/config.ts';
import { constantTimeEqual, type SecretBox } from './platform/crypto.ts';
import type { DatabaseHandle, Db } from './platform/db/database.ts';
import { startScheduler } from './platform/jobs/scheduler.ts';
import './platform/http/context.ts';
import { EXAMPLES, PAY_PAGE_PATHS, TAGS, WEBHOOKS } from './openapi.ts';
import { registerApiReference } from './platform/http/api-reference.ts';
import { registerErrorHandling, sendRendered } from './platform/http/errors.ts';
import { parseJsonBody } from './platform/http/json-body.ts';
import { finishDocument } from './platform/http/openapi.ts';
import type { RateLimiter } from './platform/http/rate-limit.ts';
import { ErrorBody, ValidationErrorBody } from './platform/http/schema-kit.ts';
import { amountKeyword } from './platform/http/validation.ts';
import { type Mailer, mailerFromConfig } from './platform/mail/mailer.ts';
import { createMetrics, type Metrics, startGasSampler } from './platform/metrics.ts';
import type { Resolver } from './platform/net/public-address.ts';
import { SafeSender } from './platform/net/safe-post.ts';
import { registerWebApp } from './platform/web/plumbing.ts';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/** Everything the HTTP app needs, built by main.ts (or the test harness) and passed in. */
export type AppDeps = {
  config: Config;
  database: DatabaseHandle;
  clock: Clock;
  logger: Logger | false;
  secrets: SecretBox;
  authStamps: AuthStamps;
  limiter: RateLimiter;
  resolver: Resolver;
  redis: Redis | undefined;
  /** The chain when the server runs one (never in the test harness); see platform/chain. */
  chain?: Chain | undefined;
  /** The metrics registry; main.ts passes it to serve METRICS_PORT too. Made here when absent. */
  metrics?: Metrics | undefined;
  /** The chat feature (and its bot when TELEGRAM_BOT_TOKEN is set); made here when absent. */
  chat?: ChatSetup | undefined;
};

function createFastify(deps: AppDeps): FastifyInstance {
  const loggerInstance: FastifyBaseLogger | undefined = deps.logger === false ? undefined : deps.logger;
  const app = Fastify({
    loggerInstance,
    logger: deps.logger === false ? false : undefined,
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: deps.config.trustProxy,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    // The router refuses malformed URLs and over-long path parameters before any hook runs;
    // they are answered in the same error shape as everything else.
    frameworkErrors: (error, _request, reply) => {
      const tooLong = (error as { code?: string }).code === 'FST_ERR_MAX_PARAM_LENGTH';
      // No hook runs for a request the router refused, so the frame refusal is added here.
      refuseFraming(reply);
      void sendRendered(reply, {
        status: tooLong ? 414 : 400,
        body: {
          error: 'invalid_request',
          detail: tooLong ? 'A path segment is too long.' : 'The URL is malformed (a bad percent-encoding?).',
        },
      });
    },
    ajv: {
      // Types are never coerced: "5" is not a number and 5 is not a string. Every problem in a
      // body is reported at once. Unknown fields are ignored (left alone, not rejected).
      customOptions: {
        coerceTypes: false,
        allErrors: true,
        removeAdditional: false,
        useDefaults: true,
        allowUnionTypes: true,
      },
      // ajv-formats goes first, so the strict calendar `date` of amountKeyword replaces its own.
      // ajv-formats is CommonJS: its plugin is also its `default` export, the one its types describe.
      // Fastify's compiler knows it by its name and then adds no copy of its own; it calls plugins
      // with no options, which ajv-formats' type (options of its own) does not say.
      plugins: [ajvFormats.default as Plugin<unknown>, amountKeyword],
    },
  });
  // JSON is the only body this API reads; anything else is answered 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.decorateRequest('integration', null);
  app.decorateRequest('session', null);
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-request-id', request.id);
    refuseFraming(reply);
    return payload;
  });
  return app;
}

/**
 * Nothing served may be shown in a frame (spec §1): JSON answers, errors, 404s, /docs and
 * /openapi.json alike. Runs before any scope's own onSend, so the pay page of a space with proven
 * sites (features/pages) replaces this with its own frame-ancestors and drops X-Frame-Options.
 * A route that set its own policy keeps it, with the refusal added when it names no ancestors.
 */
function refuseFraming(reply: FastifyReply) {
  reply.header('x-frame-options', 'DENY');
  const policy = reply.getHeader('content-security-policy');
  if (typeof policy !== 'string' || policy === '') {
    reply.header('content-security-policy', "frame-ancestors 'none'");
  } else if (!/(^|;)\s*frame-ancestors\s/i.test(policy)) {
    reply.header('content-security-policy', `${policy}; frame-ancestors 'none'`);
  }
}

async function registerDocs(app: FastifyInstance, deps: AppDeps) {
  app.addSchema(ErrorBody);
  app.addSchema(ValidationErrorBody);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tollbook API',
        version: '1',
        license: { name: 'UNLICENSED', identifier: 'LicenseRef-UNLICENSED' },
        description:
          'Paid calls, prepaid charges, invoice mirroring and signed webhooks for a seller’s own server.',
      },
      servers: [{ url: deps.config.publicUrl }],
      components: {
        securitySchemes: {
          integrationKey: { type: 'http', scheme: 'bearer', description: 'oit_ followed by 43 characters' },
          agentToken: { type: 'http', scheme: 'bearer', description: 'oat_ followed by 43 characters' },
          session: { type: 'http', scheme: 'bearer', description: 'A session token from /app/api/login' },
          sessionCookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'tb_session',
            description: 'The web app’s session cookie; writes also send X-CSRF-Token.',
          },
          webhookSignature: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Service-Signature',
            description:
              'Webhooks Tollbook sends: sha256= and the HMAC-SHA256 of the raw body under the secret.',
          },
        },
      },
    },
    // Schemas with an $id keep it as their component name (ErrorBody, HTTPValidationError).
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`),
    },
    transformObject: (documentObject) =>
      'openapiObject' in documentObject
        ? finishDocument(documentObject.openapiObject, {
            examples: EXAMPLES,
            paths: PAY_PAGE_PATHS,
            webhooks: WEBHOOKS,
            tags: TAGS,
          })
        : documentObject.swaggerObject,
    transform: ({ schema, url }) => {
      const security: Record<string, string[]>[] = url.startsWith('/integration')
        ? [{ integrationKey: [] }]
        : url.startsWith('/agent/')
          ? [{ agentToken: [] }]
          : url.startsWith('/app/api')
            ? [{ session: [] }, { sessionCookie: [] }]
            : [];
      // Swagger reads `security` from the route's schema, a key Fastify's own schema type lacks.
      const documented = { ...schema, security };
      return { schema: documented, url };
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  registerApiReference(app);
}

/**
 * /metrics on the public port, only for the bearer of METRICS_TOKEN (without one configured the
 * route does not exist here; METRICS_PORT serves it on loopback instead). Latency is observed
 * for every answered request, labelled with the route pattern so ids never become labels.
 */
function registerMetrics(app: FastifyInstance, deps: AppDeps, metrics: Metrics) {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
  const token = deps.config.metricsToken;
  if (token !== undefined) {
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      const header = request.headers.authorization ?? '';
      const given = header.startsWith('Bearer ') ? header.slice(7) : '';
      if (!constantTimeEqual(given, token))
        throw new AppError('unauthorized', 'Send Authorization: Bearer <METRICS_TOKEN>.');
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
  }
  const chain = deps.chain;
  if (chain) {
    const stop = startGasSampler(
      metrics,
      async () => {
        // Stored for Home and the owners' alarm (pages never ask the chain).
        return recordGasBalances(
          { db: deps.database.db, clock: deps.clock, lowWei: deps.config.gasLowWei },
          await chain.gasBalances(),
        );
      },
      {
        clock: deps.clock,
        onError: (error) => app.log.warn({ err: error }, 'reading the gas balance for /metrics failed'),
      },
    );
    app.addHook('onClose', async () => stop());
  }
}

/** Settlements a payer stopped waiting for are finished here (booked or failed), until the app closes. */
function startX402Follower(app: FastifyInstance, x402: Parameters<typeof followPendingSettlements>[0]) {
  const task = { name: 'x402-follower', everyMs: 5_000, run: () => followPendingSettlements(x402) };
  const stop = startScheduler([task], x402.logger);
  app.addHook('onClose', async () => stop());
}

function registerIntegration(app: FastifyInstance, deps: AppDeps, mailer: Mailer, chat: ChatSetup) {
  const db = deps.database.db;
  const door = createKeyDoor({ db, clock: deps.clock, limiter: deps.limiter, authStamps: deps.authStamps });
  return app.register(async (scope) => {
    // Authentication runs before the body is read, so an unknown key never learns what is
    // wrong with its body; every route declares exactly one scope.
    scope.addHook('onRequest', async (request: FastifyRequest, reply) => {
      const routeScope = request.routeOptions.config.scope;
      if (routeScope === undefined) return;
      const { caller, rate } = await door.admit(request.headers.authorization, routeScope);
      request.integration = caller;
      reply.header('ratelimit-limit', String(rate.limit));
      reply.header('ratelimit-remaining', String(rate.remaining));
      reply.header('ratelimit-reset', String(rate.resetSeconds));
    });
    registerPingRoute(scope);
    registerAccountRoutes(scope, { db, clock: deps.clock });
    registerContactRoutes(scope, { db, clock: deps.clock });
    const money = { db, clock: deps.clock, publicUrl: deps.config.publicUrl };
    registerPaymentRequestRoutes(scope, money);
    registerChargeRoutes(scope, money);
    registerX402CreditRoutes(scope, money);
    registerEndpointIntegrationRoutes(scope, { db, clock: deps.clock });
    registerInvoiceRoutes(scope, { ...money, mailer, chat: invoiceChatPort(chat.deps) });
    registerPushRoutes(scope, { db, clock: deps.clock });
    registerChatRoutes(scope, chat.deps);
  });
}

function registerAppApi(
  app: FastifyInstance,
  deps: AppDeps,
  appMailer: Mailer,
  chat: ChatSetup,
  agents: AgentsDeps,
) {
  const db = deps.database.db;
  const base = { db, clock: deps.clock };
  const userDeps = {
    ...base,
    secureCookies: deps.config.publicUrl.startsWith('https://'),
    mailer: appMailer,
    publicUrl: deps.config.publicUrl,
    logger: deps.logger === false ? undefined : deps.logger,
  };
  // Site proofs fetch addresses people typed: the same SSRF rules as webhooks.
  const siteSender = new SafeSender({
    policy: { allowPrivate: deps.config.webhookAllowPrivate },
    resolver: deps.resolver,
  });
  app.addHook('onClose', () => siteSender.close());
  registerUserRoutes(app, userDeps);
  registerPasswordResetRoutes(app, userDeps);
  return app.register(async (scope) => {
    scope.addHook('onRequest', createSessionGuard(base));
    registerSessionRoutes(scope, userDeps);
    registerSpaceRoutes(scope, { ...base, authStamps: deps.authStamps });
    registerInvitationRoutes(scope, userDeps);
    registerKeyRoutes(scope, {
      ...base,
      secrets: deps.secrets,
      authStamps: deps.authStamps,
      resolver: deps.resolver,
      webhookAllowPrivate: deps.config.webhookAllowPrivate,
      webhookAllowList: deps.config.webhookAllowList,
      production: deps.config.production,
    });
    registerNotificationRoutes(scope, base);
    registerPaymentRequestAppRoutes(scope, { ...base, publicUrl: deps.config.publicUrl });
    registerClientCreditRoutes(scope, { ...base, publicUrl: deps.config.publicUrl });
    registerPushAppRoutes(scope, base);
    registerAccountAppRoutes(scope, base);
    registerLedgerAppRoutes(scope, base);
    registerContactAppRoutes(scope, base);
    registerEndpointAppRoutes(scope, base);
    registerIncomeAppRoutes(scope, base);
    const invoiceDeps = {
      ...base,
      publicUrl: deps.config.publicUrl,
      mailer: appMailer,
      chat: invoiceChatPort(chat.deps),
    };
    registerInvoiceAppRoutes(scope, invoiceDeps);
    registerInvoiceDocumentAppRoutes(scope, invoiceDeps);
    registerChatAppRoutes(scope, chat.deps);
    registerSiteAppRoutes(scope, { ...base, sender: siteSender, allowHttp: deps.config.webhookAllowPrivate });
    registerPayoutRoutes(scope, { ...base, chain: deps.chain, confirmations: deps.config.confirmations });
    registerAgentAppRoutes(scope, agents);
    registerWebhookRoutes(scope, {
      ...base,
      secrets: deps.secrets,
      resolver: deps.resolver,
      webhookAllowPrivate: deps.config.webhookAllowPrivate,
      webhookAllowList: deps.config.webhookAllowList,
      production: deps.config.production,
    });
  });
}

/** The owner's web app under /app: pages that call the same services as /app/api. */
function registerWebPages(
  app: FastifyInstance,
  deps: AppDeps,
  appMailer: Mailer,
  chat: ChatSetup,
  agents: AgentsDeps,
) {
  const db = deps.database.db;
  const base = { db, clock: deps.clock };
  const userDeps = { ...base, secureCookies: deps.config.publicUrl.startsWith('https://') };
  const spaceDeps = { ...base, authStamps: deps.authStamps };
  const siteSender = new SafeSender({
    policy: { allowPrivate: deps.config.webhookAllowPrivate },
    resolver: deps.resolver,
  });
  app.addHook('onClose', () => siteSender.close());
  const webDeps = {
    loadViewer: (token: string, bookId: string | undefined) => loadViewer(base, token, bookId),
  };
  return registerWebApp(app, webDeps, (scope) => {
    registerShellPages(scope);
    registerHomePages(scope, base);
    registerUserPages(scope, userDeps);
    registerPasswordResetPages(scope, {
      ...userDeps,
      mailer: appMailer,
      publicUrl: deps.config.publicUrl,
      logger: deps.logger === false ? undefined : deps.logger,
    });
    registerSpacePages(scope, {
      ...spaceDeps,
      mailer: appMailer,
      publicUrl: deps.config.publicUrl,
      logger: deps.logger === false ? undefined : deps.logger,
    });
    registerInvitationPages(scope, base);
    registerResourcePages(scope, base);
    registerLedgerPages(scope, base);
    registerPushPages(scope, spaceDeps);
    registerSubscriptionPages(scope, {
      ...base,
      secrets: deps.secrets,
      resolver: deps.resolver,
      webhookAllowPrivate: deps.config.webhookAllowPrivate,
      webhookAllowList: deps.config.webhookAllowList,
      production: deps.config.production,
    });
    registerKeyPages(scope, {
      ...base,
      secrets: deps.secrets,
      authStamps: deps.authStamps,
      resolver: deps.resolver,
      webhookAllowPrivate: deps.config.webhookAllowPrivate,
      webhookAllowList: deps.config.webhookAllowList,
      production: deps.config.production,
    });
    registerPaymentRequestPages(scope, { ...base, publicUrl: deps.config.publicUrl });
    registerAccountPages(scope, base);
    registerContactPages(scope, base);
    registerClientCreditPages(scope, { ...base, publicUrl: deps.config.publicUrl });
    registerInvoicePages(scope, {
      ...base,
      publicUrl: deps.config.publicUrl,
      mailer: appMailer,
      chat: invoiceChatPort(chat.deps),
    });
    registerNotificationPages(scope, base);
    registerSitePages(scope, { ...base, sender: siteSender, allowHttp: deps.config.webhookAllowPrivate });
    registerPayoutPages(scope, { ...base, chain: deps.chain, confirmations: deps.config.confirmations });
    registerChatPages(scope, chat.deps);
    registerAgentPages(scope, agents);
  });
}

/** The metrics registry with the features' scrape-time gauges; main.ts makes one for both ports. */
export function createAppMetrics(db: Db, clock: Clock): Metrics {
  return createMetrics({ db, clock, gauges: screeningGauges(db) });
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = createFastify(deps);
  configureScreening(deps.config.screening);
  registerErrorHandling(app);
  registerMetrics(app, deps, deps.metrics ?? createAppMetrics(deps.database.db, deps.clock));
  await app.register(cookie);
  await registerDocs(app, deps);
  // Liveness: answers without touching anything, so it also measures the bare HTTP stack.
  app.get('/livez', { schema: { hide: true } }, async () => ({ ok: true }));
  // Readiness: the database answers.
  app.get('/healthz', { schema: { hide: true } }, async () => {
    await deps.database.db.selectFrom('spaces').select('id').limit(1).execute();
    return { ok: true };
  });
  const facilitator = createFacilitator(deps.database.db, deps.chain, {
    sharedDatabase: deps.database.kind === 'postgres',
    logger: deps.logger === false ? undefined : deps.logger,
    replaceAfterMs: deps.config.gasReplaceAfterMs,
    confirmationTimeoutMs: deps.config.settlementWaitMs,
  });
  const x402 = {
    db: deps.database.db,
    clock: deps.clock,
    publicUrl: deps.config.publicUrl,
    facilitator,
    secrets: deps.secrets,
    logger: deps.logger === false ? undefined : deps.logger,
  };
  if (deps.chain && deps.config.runWorkers) startX402Follower(app, x402);
  // The card rail in production: Stripe Checkout, when both Stripe keys are configured.
  const card = deps.config.stripe && { ...x402, gateway: stripeGateway(deps.config.stripe) };
  registerPageRoutes(app, {
    ...x402,
    production: deps.config.production,
    card,
    networks: deps.chain?.networks,
  });
  if (card) await registerStripeWebhookRoute(app, card);
  registerReceiptRoutes(app, x402);
  registerX402Routes(app, {
    ...x402,
    limiter: deps.limiter,
    door: createKeyDoor({
      db: x402.db,
      clock: deps.clock,
      limiter: deps.limiter,
      authStamps: deps.authStamps,
    }),
  });
  const mailer = mailerFromConfig(deps.config);
  app.addHook('onClose', async () => mailer.close());
  const chat =
    deps.chat ??
    setUpChat(deps.config, {
      db: deps.database.db,
      clock: deps.clock,
      logger: deps.logger === false ? undefined : deps.logger,
    });
  if (chat.bot) registerTelegramWebhook(app, chat.bot);
  await registerIntegration(app, deps, mailer, chat);
  // The agents' deps hold the chain: approving a wallet transfer or an x402 fetch asks it.
  const agents: AgentsDeps = {
    db: deps.database.db,
    clock: deps.clock,
    secrets: deps.secrets,
    chain: deps.chain,
    facilitator,
    resolver: deps.resolver,
    allowPrivate: deps.config.webhookAllowPrivate,
  };
  await registerAppApi(app, deps, mailer, chat, agents);
  await registerAgentRoutes(app, { ...agents, limiter: deps.limiter });
  await registerWebPages(app, deps, mailer, chat, agents);
  // Development rail: only with a local chain, which production never has.
  if (deps.chain?.local && !deps.config.production) {
    registerDevFaucetRoutes(app, { local: deps.chain.local, production: deps.config.production });
  }
  return app;
}
