import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import scalar from '@scalar/fastify-api-reference';
import ajvFormats from 'ajv-formats';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Clock } from './core/clock.ts';
import {
  registerAccountAppRoutes,
  registerAccountPages,
  registerAccountRoutes,
  registerLedgerAppRoutes,
  registerLedgerPages,
} from './features/accounts/index.ts';
import { loadShell, registerShellPages } from './features/app-shell/index.ts';
import { registerChargeRoutes } from './features/charges/index.ts';
import { registerClientCreditPages, registerClientCreditRoutes } from './features/client-credits/index.ts';
import {
  registerContactAppRoutes,
  registerContactPages,
  registerContactRoutes,
} from './features/contacts/index.ts';
import { registerDevFaucetRoutes } from './features/dev-faucet/index.ts';
import { registerInvoiceAppRoutes, registerInvoiceRoutes } from './features/invoices/index.ts';
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
import { registerPushAppRoutes, registerPushPages, registerPushRoutes } from './features/push/index.ts';
import {
  registerEndpointAppRoutes,
  registerIncomeAppRoutes,
  registerResourcePages,
} from './features/resources/index.ts';
import { registerSiteAppRoutes, registerSitePages } from './features/sites/index.ts';
import { registerSpacePages, registerSpaceRoutes } from './features/spaces/index.ts';
import {
  createSessionGuard,
  registerSessionRoutes,
  registerUserPages,
  registerUserRoutes,
  resolveSession,
} from './features/users/index.ts';
import { registerSubscriptionPages, registerWebhookRoutes } from './features/webhooks/index.ts';
import { createFacilitator, registerX402Routes } from './features/x402/index.ts';
import type { AuthStamps } from './platform/auth-stamps.ts';
import { type Chain, GAS_LOW_WEI } from './platform/chain/chain.ts';
import type { Config } from './platform/config.ts';
import type { SecretBox } from './platform/crypto.ts';
import type { DatabaseHandle } from './platform/db/database.ts';
import './platform/http/context.ts';
import { registerErrorHandling, sendRendered } from './platform/http/errors.ts';
import { parseJsonBody } from './platform/http/json-body.ts';
import type { RateLimiter } from './platform/http/rate-limit.ts';
import { ErrorBody, ValidationErrorBody } from './platform/http/schema-kit.ts';
import { amountKeyword } from './platform/http/validation.ts';
import { type Mailer, mailerFromConfig } from './platform/mail/mailer.ts';
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
};

function createFastify(deps: AppDeps): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.logger === false ? undefined : (deps.logger as never),
    logger: deps.logger === false ? false : undefined,
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    // The router refuses malformed URLs and over-long path parameters before any hook runs;
    // they are answered in the same error shape as everything else.
    frameworkErrors: (error, _request, reply) => {
      const tooLong = (error as { code?: string }).code === 'FST_ERR_MAX_PARAM_LENGTH';
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
      plugins: [ajvFormats as never, amountKeyword as never],
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
    return payload;
  });
  return app;
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
        description:
          'Paid calls, prepaid charges, invoice mirroring and signed webhooks for a seller’s own server.',
      },
      servers: [{ url: deps.config.publicUrl }],
      components: {
        securitySchemes: {
          integrationKey: { type: 'http', scheme: 'bearer', description: 'oit_ followed by 43 characters' },
          session: { type: 'http', scheme: 'bearer', description: 'A session token from /app/api/login' },
        },
      },
    },
    transform: ({ schema, url }) => {
      const security = url.startsWith('/integration')
        ? [{ integrationKey: [] }]
        : url.startsWith('/app/api')
          ? [{ session: [] }]
          : [];
      return { schema: { ...schema, security } as never, url };
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(scalar, {
    routePrefix: '/docs',
    configuration: { url: '/openapi.json', title: 'Tollbook API' },
  });
}

/**
 * Prometheus text for operators: the gas wallet's balance per network (what pays for x402
 * settlements). Read live, so a scrape reflects the chain now.
 */
function registerMetrics(app: FastifyInstance, deps: AppDeps) {
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const lines = [
      '# HELP tollbook_gas_wallet_balance_wei Native balance of the gas wallet that pays for settlements.',
      '# TYPE tollbook_gas_wallet_balance_wei gauge',
    ];
    const balances = (await deps.chain?.gasBalances()) ?? [];
    for (const balance of balances) {
      const labels = `network="${balance.caip2}",wallet="${deps.chain!.gasWallet}"`;
      lines.push(`tollbook_gas_wallet_balance_wei{${labels}} ${balance.wei}`);
    }
    lines.push(
      '# HELP tollbook_gas_wallet_low Whether the gas wallet is below the warning threshold (1) or not (0).',
      '# TYPE tollbook_gas_wallet_low gauge',
    );
    for (const balance of balances) {
      lines.push(`tollbook_gas_wallet_low{network="${balance.caip2}"} ${balance.wei < GAS_LOW_WEI ? 1 : 0}`);
    }
    return reply.type('text/plain; version=0.0.4').send(`${lines.join('\n')}\n`);
  });
}

function registerIntegration(app: FastifyInstance, deps: AppDeps, mailer: Mailer) {
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
    registerInvoiceRoutes(scope, { ...money, mailer });
    registerPushRoutes(scope, { db, clock: deps.clock });
  });
}

function registerAppApi(app: FastifyInstance, deps: AppDeps, appMailer: Mailer) {
  const db = deps.database.db;
  const base = { db, clock: deps.clock };
  const userDeps = { ...base, secureCookies: deps.config.publicUrl.startsWith('https://') };
  // Site proofs fetch addresses people typed: the same SSRF rules as webhooks.
  const siteSender = new SafeSender({
    policy: { allowPrivate: deps.config.webhookAllowPrivate },
    resolver: deps.resolver,
  });
  app.addHook('onClose', () => siteSender.close());
  registerUserRoutes(app, userDeps);
  return app.register(async (scope) => {
    scope.addHook('onRequest', createSessionGuard(base));
    registerSessionRoutes(scope, userDeps);
    registerSpaceRoutes(scope, { ...base, authStamps: deps.authStamps });
    registerKeyRoutes(scope, {
      ...base,
      secrets: deps.secrets,
      authStamps: deps.authStamps,
      resolver: deps.resolver,
      webhookAllowPrivate: deps.config.webhookAllowPrivate,
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
    registerInvoiceAppRoutes(scope, { ...base, publicUrl: deps.config.publicUrl, mailer: appMailer });
    registerSiteAppRoutes(scope, { ...base, sender: siteSender, allowHttp: deps.config.webhookAllowPrivate });
    registerWebhookRoutes(scope, {
      ...base,
      secrets: deps.secrets,
      resolver: deps.resolver,
      webhookAllowPrivate: deps.config.webhookAllowPrivate,
    });
  });
}

/** The owner's web app under /app: pages that call the same services as /app/api. */
function registerWebPages(app: FastifyInstance, deps: AppDeps) {
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
    resolveSession: async (token: string) => {
      const session = await resolveSession(base, token);
      return session && { userId: session.user_id, csrfToken: session.csrf_token };
    },
    loadShell: (userId: string, bookId: string | undefined) => loadShell(spaceDeps, userId, bookId),
  };
  return registerWebApp(app, webDeps, (scope) => {
    registerShellPages(scope);
    registerUserPages(scope, userDeps);
    registerSpacePages(scope, spaceDeps);
    registerResourcePages(scope, base);
    registerLedgerPages(scope, base);
    registerPushPages(scope, spaceDeps);
    registerSubscriptionPages(scope, {
      ...base,
      secrets: deps.secrets,
      resolver: deps.resolver,
      webhookAllowPrivate: deps.config.webhookAllowPrivate,
    });
    registerKeyPages(scope, {
      ...base,
      secrets: deps.secrets,
      authStamps: deps.authStamps,
      resolver: deps.resolver,
      webhookAllowPrivate: deps.config.webhookAllowPrivate,
    });
    registerPaymentRequestPages(scope, { ...base, publicUrl: deps.config.publicUrl });
    registerAccountPages(scope, base);
    registerContactPages(scope, base);
    registerClientCreditPages(scope, { ...base, publicUrl: deps.config.publicUrl });
    registerNotificationPages(scope, base);
    registerSitePages(scope, { ...base, sender: siteSender, allowHttp: deps.config.webhookAllowPrivate });
  });
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = createFastify(deps);
  registerErrorHandling(app);
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
  });
  const x402 = {
    db: deps.database.db,
    clock: deps.clock,
    publicUrl: deps.config.publicUrl,
    facilitator,
    logger: deps.logger === false ? undefined : deps.logger,
  };
  registerPageRoutes(app, { ...x402, production: deps.config.production, networks: deps.chain?.networks });
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
  registerMetrics(app, deps);
  const mailer = mailerFromConfig(deps.config);
  app.addHook('onClose', async () => mailer.close());
  await registerIntegration(app, deps, mailer);
  await registerAppApi(app, deps, mailer);
  await registerWebPages(app, deps);
  // Development rail: only with a local chain, which production never has.
  if (deps.chain?.local && !deps.config.production) {
    registerDevFaucetRoutes(app, { local: deps.chain.local, production: deps.config.production });
  }
  return app;
}
