import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { hasSecretShape } from '../../core/ids.ts';
import { Enum, Text, Type } from '../../platform/http/schema-kit.ts';
import { type TypedApp, typedRoutes } from '../../platform/http/typed.ts';
import { TOP_UP_CHOICES } from '../charges/index.ts';
import { frameAncestors } from '../sites/index.ts';
import { machineQuote, payOnPage } from '../x402/index.ts';
import * as service from './service.ts';
import { cardProblemPage, creditPage, invoicePage, notFoundPage, payPage, quotePage } from './views.tsx';

const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 100 }) });
const TopUpQuery = Type.Object({ amount: Enum(TOP_UP_CHOICES) });
/**
 * What the pages read from their query: `?card=returned` back from Checkout, `?by=card` on the
 * invoice's Pay button. Any other value (or a repeated one) only means "not that", so the schema
 * takes anything rather than answer a person's page with a validation error.
 */
const PayPageQuery = Type.Object({ card: Type.Optional(Type.Unknown()) });
const InvoicePayQuery = Type.Object({ by: Type.Optional(Type.Unknown()) });
const CardIn = Type.Object({
  number: Text({ minLength: 1, maxLength: 30 }),
  exp: Text({ minLength: 1, maxLength: 7 }),
  cvc: Text({ minLength: 1, maxLength: 4 }),
});

// Public pages: no login, addressed by long random tokens. None may be framed (the framing
// issue will admit proven sites), none is cached, and none leaks its address as a referrer.
// "Pay by card" posts to this server, which redirects to the card processor's checkout: forms
// may end there too (browsers hold a form's redirects to form-action).
const pageCsp = (ancestors: string, checkoutOrigin = '') =>
  `default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'; form-action 'self'${checkoutOrigin ? ` ${checkoutOrigin}` : ''}; base-uri 'none'; frame-ancestors ${ancestors}`;

const checkoutOf = (deps: service.PagesDeps) => deps.card?.gateway.checkoutOrigin ?? '';

const PAGE_HEADERS = {
  'x-frame-options': 'DENY',
  'content-security-policy': pageCsp(frameAncestors([])),
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

/** The page headers, with the card processor's checkout admitted as a form target when configured. */
const pageHeaders = (deps: service.PagesDeps) => ({
  ...PAGE_HEADERS,
  'content-security-policy': pageCsp(frameAncestors([]), checkoutOf(deps)),
});

const PAYER_CORS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'PAYMENT-REQUIRED, PAYMENT-RESPONSE',
};

/** The pay page's own scripts, served as files so the CSP can forbid inline scripts. */
const ASSETS: Record<string, string> = Object.fromEntries(
  ['pay.js', 'pay-status.js', 'pay-wallet.js', 'pay-copy.js'].map((name) => [
    name,
    readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8'),
  ]),
);

/** Pages that may be framed, with the origins allowed; every other page refuses framing. */
const framable = new WeakMap<FastifyRequest, string[]>();

/** Back from Checkout (`?card=returned`): the page says the card payment may still be confirming. */
const withCardReturn = <T>(card: unknown, model: T) => ({ ...model, cardReturned: card === 'returned' });

function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

function html(reply: FastifyReply, status: number, body: string) {
  return reply.code(status).type('text/html; charset=utf-8').send(body);
}

export function registerPageRoutes(app: FastifyInstance, deps: service.PagesDeps) {
  app.register(async (plain) => {
    const scope = typedRoutes(plain);
    // The invoice page's pay button and the quote page's answer are plain HTML forms: their
    // bodies are read here as text fields rather than answered 415 like any non-JSON body
    // elsewhere (the pay button sends none; the quote's answer sends the name typed).
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 1024 },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
    // A garbled token (a cut link, a NUL byte) is an unknown page: answered before validation,
    // so a person sees the not-found page rather than a validation error.
    // Before validation the params are the router's strings, as this hook's type says.
    scope.addHook<{ Params: { token?: string } }>('onRequest', async (request, reply) => {
      const { token } = request.params;
      if (token === undefined || ['pr_', 'cr_', 'inv_'].some((prefix) => hasSecretShape(token, prefix)))
        return;
      if (request.method === 'GET') return html(reply, 404, notFoundPage());
      return reply.code(404).send({ error: 'not_found', detail: 'No payment request at this address.' });
    });
    scope.addHook('onSend', async (request, reply, payload) => {
      reply.headers(pageHeaders(deps));
      // A payment page of a space with proven sites may be framed there (and only there).
      const origins = framable.get(request);
      if (origins && origins.length > 0) {
        reply.removeHeader('x-frame-options');
        reply.header('content-security-policy', pageCsp(frameAncestors(origins), checkoutOf(deps)));
      }
      if (request.url.startsWith('/pay/')) reply.headers(PAYER_CORS);
      return payload;
    });
    // A browser payer on another origin may send PAYMENT-SIGNATURE and read the x402 headers.
    scope.options('/pay/:token', { schema: { hide: true, params: TokenParams } }, async (_request, reply) =>
      reply
        .code(204)
        .headers({
          'access-control-allow-methods': 'GET, POST, OPTIONS',
          'access-control-allow-headers': 'Accept, Content-Type, PAYMENT-SIGNATURE',
          'access-control-max-age': '600',
        })
        .send(),
    );
    registerPayPage(scope, deps);
    scope.post(
      '/pay/:token/card',
      { schema: { hide: true, params: TokenParams, body: CardIn } },
      async (request) => {
        const { token } = request.params;
        return service.payByCard(deps, token, request.body);
      },
    );
    registerCardCheckout(scope, deps);
    scope.get('/credit/:token', { schema: { hide: true, params: TokenParams } }, async (request, reply) => {
      const { token } = request.params;
      const model = await service.creditPageModel(deps, token);
      return model ? html(reply, 200, creditPage(model)) : html(reply, 404, notFoundPage());
    });
    scope.post(
      '/credit/:token/top-up',
      { schema: { hide: true, params: TokenParams, querystring: TopUpQuery } },
      async (request, reply) => {
        const made = await service.topUpFromCreditPage(deps, request.params.token, request.query.amount);
        return made ? reply.code(303).header('location', made.path).send() : html(reply, 404, notFoundPage());
      },
    );
    registerInvoicePage(scope, deps);
    registerPayPageExtras(scope, deps);
  });
}

/** The payment page: a person's page, or for a machine the x402 quote or payment (spec §4). */
function registerPayPage(scope: TypedApp, deps: service.PagesDeps) {
  scope.get(
    '/pay/:token',
    { schema: { hide: true, params: TokenParams, querystring: PayPageQuery } },
    async (request, reply) => {
      const { token } = request.params;
      // A machine: it asks for JSON, or it sends an x402 payment (spec §4 rules 2–3).
      const payment = request.headers['payment-signature'];
      if (typeof payment === 'string' || wantsJson(request)) {
        const answer =
          typeof payment === 'string'
            ? await payOnPage(deps, token, payment)
            : await machineQuote(deps, token);
        return reply.code(answer.status).headers(answer.headers).send(answer.body);
      }
      try {
        const page = await service.payPage(deps, token);
        framable.set(request, page.frameOrigins);
        return html(reply, 200, payPage(withCardReturn(request.query.card, page.model)));
      } catch (error) {
        if (error instanceof AppError && error.code === 'not_found') return html(reply, 404, notFoundPage());
        throw error;
      }
    },
  );
}

/** "Pay by card" (a plain form): a Stripe Checkout Session for the open amount, then off to it. */
function registerCardCheckout(scope: TypedApp, deps: service.PagesDeps) {
  scope.post(
    '/pay/:token/checkout',
    { schema: { hide: true, params: TokenParams } },
    async (request, reply) => {
      const { token } = request.params;
      try {
        const session = await service.payByCheckout(deps, token);
        return reply.code(303).header('location', session.url).send();
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        return html(reply, error.status, cardProblemPage(error.message, `/pay/${token}`));
      }
    },
  );
}

/** The pay page's status poll and its scripts (the wallet button, the status poller). */
function registerPayPageExtras(scope: TypedApp, deps: service.PagesDeps) {
  // What the pay page polls to turn to Paid by itself, whichever rail settled the request.
  scope.get('/pay/:token/status', { schema: { hide: true, params: TokenParams } }, async (request) => {
    const { token } = request.params;
    return service.payStatus(deps, token);
  });
  for (const [name, script] of Object.entries(ASSETS)) {
    scope.get(`/assets/${name}`, { schema: { hide: true } }, async (_request, reply) =>
      reply.type('text/javascript; charset=utf-8').send(script),
    );
  }
}

/** The public invoice page (/i/{token}) and its Pay button, which opens the payment page. */
function registerInvoicePage(scope: TypedApp, deps: service.PagesDeps) {
  scope.get('/i/:token', { schema: { hide: true, params: TokenParams } }, async (request, reply) => {
    const { token } = request.params;
    const model = await service.invoicePageModel(deps, token);
    if (model) return html(reply, 200, invoicePage(model));
    // A sent quote has its page at the same address: the client answers it there.
    const quote = await service.quotePageModel(deps, token);
    return quote ? html(reply, 200, quotePage(quote)) : html(reply, 404, notFoundPage());
  });
  registerQuoteAnswers(scope, deps);
  const payOptions = { schema: { hide: true, params: TokenParams, querystring: InvoicePayQuery } };
  scope.post('/i/:token/pay', payOptions, async (request, reply) => {
    const { token } = request.params;
    const outcome = await service.payInvoice(deps, token);
    // "Pay by card" on the invoice goes straight to Stripe for the invoice's payment request.
    if (outcome.ok && request.query.by === 'card') {
      try {
        const session = await service.payByCheckout(deps, outcome.payUrl.slice('/pay/'.length));
        return reply.code(303).header('location', session.url).send();
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        return html(reply, error.status, cardProblemPage(error.message, `/i/${token}`));
      }
    }
    if (outcome.ok) return reply.code(303).header('location', outcome.payUrl).send();
    const model = await service.invoicePageModel(deps, token, outcome.problem);
    return model ? html(reply, 409, invoicePage(model)) : html(reply, 404, notFoundPage());
  });
  // The book's logo on its pages: addressed by the SHA-256 of its bytes, so it never goes stale.
  scope.get(
    '/logos/:digest',
    { schema: { hide: true, params: Type.Object({ digest: Type.String({ maxLength: 64 }) }) } },
    async (request, reply) => {
      const logo = await service.logoFile(deps, request.params.digest);
      if (!logo) return html(reply, 404, notFoundPage());
      return reply.code(200).type(logo.contentType).send(logo.bytes);
    },
  );
  // Browsers ask for it on every page; an empty answer keeps their consoles clean.
  scope.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) =>
    reply.code(204).header('cache-control', 'public, max-age=86400').send(),
  );
}

/**
 * The client's answer on a quote's page: accept or decline, with the name typed. Then back to
 * the page, which shows the answer; a refusal shows the page again with why (409 for a quote
 * that can no longer take that answer, 422 for a missing name).
 */
function registerQuoteAnswers(scope: TypedApp, deps: service.PagesDeps) {
  for (const decision of ['accept', 'decline'] as const) {
    scope.post(
      `/i/:token/${decision}`,
      { schema: { hide: true, params: TokenParams } },
      async (request, reply) => {
        const { token } = request.params;
        const name = service.typedName(request.body);
        const refusedPage = async (status: number, problem: string) => {
          const typed = service.typedName(request.body) ?? '';
          const model = await service.quotePageModel(deps, token, { problem, name: typed });
          return model ? html(reply, status, quotePage(model)) : html(reply, 404, notFoundPage());
        };
        if (name === undefined) return refusedPage(422, 'Type your name (up to 200 characters) to answer.');
        try {
          await service.answerQuoteOnPage(deps, token, decision, name);
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          if (error.code === 'not_found') return html(reply, 404, notFoundPage());
          return refusedPage(error.status, error.message);
        }
        return reply.code(303).header('location', `/i/${token}`).send();
      },
    );
  }
}
