import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasSecretShape } from '../../core/ids.ts';
import { type Static, Text, Type } from '../../platform/http/schema-kit.ts';
import * as service from './service.ts';
import { creditPage, notFoundPage, PAY_SCRIPT, payPage } from './views.ts';

const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 100 }) });
const CardIn = Type.Object({
  number: Text({ minLength: 1, maxLength: 30 }),
  exp: Text({ minLength: 1, maxLength: 7 }),
  cvc: Text({ minLength: 1, maxLength: 4 }),
});

// Public pages: no login, addressed by long random tokens. None may be framed (the framing
// issue will admit proven sites), none is cached, and none leaks its address as a referrer.
const PAGE_HEADERS = {
  'x-frame-options': 'DENY',
  'content-security-policy':
    "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

function html(reply: FastifyReply, status: number, body: string) {
  return reply.code(status).type('text/html; charset=utf-8').send(body);
}

export function registerPageRoutes(app: FastifyInstance, deps: service.PagesDeps) {
  app.register(async (scope) => {
    // A garbled token (a cut link, a NUL byte) is an unknown page: answered before validation,
    // so a person sees the not-found page rather than a validation error.
    scope.addHook('onRequest', async (request, reply) => {
      const token = (request.params as { token?: string }).token;
      if (token === undefined || hasSecretShape(token, 'pr_') || hasSecretShape(token, 'cr_')) return;
      if (request.method === 'GET') return html(reply, 404, notFoundPage());
      return reply.code(404).send({ error: 'not_found', detail: 'No payment request at this address.' });
    });
    scope.addHook('onSend', async (_request, reply, payload) => {
      reply.headers(PAGE_HEADERS);
      return payload;
    });
    scope.get('/pay/:token', { schema: { hide: true, params: TokenParams } }, async (request, reply) => {
      const { token } = request.params as Static<typeof TokenParams>;
      if (wantsJson(request)) {
        const view = await service.machineView(deps, token);
        if (view.kind === 'state')
          return reply.code(view.record.status === 'paid' ? 200 : 409).send(view.record);
        const encoded = Buffer.from(JSON.stringify(view.quote)).toString('base64');
        return reply.code(402).header('payment-required', encoded).send(view.quote);
      }
      try {
        return html(reply, 200, payPage(await service.payPageModel(deps, token)));
      } catch (error) {
        if ((error as { code?: string }).code === 'not_found') return html(reply, 404, notFoundPage());
        throw error;
      }
    });
    scope.post(
      '/pay/:token/card',
      { schema: { hide: true, params: TokenParams, body: CardIn } },
      async (request) => {
        const { token } = request.params as Static<typeof TokenParams>;
        return service.payByCard(deps, token, request.body as Static<typeof CardIn>);
      },
    );
    scope.get('/credit/:token', { schema: { hide: true, params: TokenParams } }, async (request, reply) => {
      const { token } = request.params as Static<typeof TokenParams>;
      const model = await service.creditPageModel(deps, token);
      return model ? html(reply, 200, creditPage(model)) : html(reply, 404, notFoundPage());
    });
    scope.get('/assets/pay.js', { schema: { hide: true } }, async (_request, reply) =>
      reply.type('text/javascript; charset=utf-8').send(PAY_SCRIPT),
    );
  });
}
