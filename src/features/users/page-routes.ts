import type { FastifyInstance } from 'fastify';
import { type Static, Type } from '../../platform/http/schema-kit.ts';
import { EMPTY_FORM } from '../../platform/web/components.tsx';
import { runForm, SESSION_COOKIE, seeOther, sendPage, viewerShellOf } from '../../platform/web/plumbing.ts';
import { LoginPage, SignupPage } from './pages.tsx';
import { SESSION_COOKIE as API_SESSION_COOKIE, setSessionCookie } from './routes.ts';
import { LoginIn, SignupIn } from './schemas.ts';
import * as service from './service.ts';

const NextQuery = Type.Object({ next: Type.Optional(Type.String({ maxLength: 2000 })) });

// The pages and the API share one cookie: a person logged in here is logged in to /app/api.
if (SESSION_COOKIE !== API_SESSION_COOKIE)
  throw new Error('The web app and the API must share the session cookie.');

/** Only a path inside the app is followed after logging in (never another site). */
function safeNext(next: string | undefined): string {
  return next && /^\/app(\/|$|\?)/.test(next) && !next.startsWith('//') ? next : '/app';
}

export function registerUserPages(
  scope: FastifyInstance,
  deps: service.UsersDeps & { secureCookies: boolean },
) {
  const open = { webPublic: true };
  scope.get(
    '/app/login',
    { schema: { hide: true, querystring: NextQuery }, config: open },
    async (request, reply) =>
      sendPage(
        reply,
        LoginPage({ form: EMPTY_FORM, next: (request.query as Static<typeof NextQuery>).next ?? '' }),
      ),
  );
  scope.post(
    '/app/login',
    { schema: { hide: true, querystring: NextQuery, body: LoginIn }, attachValidation: true, config: open },
    async (request, reply) => {
      const next = (request.query as Static<typeof NextQuery>).next;
      const outcome = await runForm(request, () =>
        service.login(deps, request.body as Static<typeof LoginIn>, { clientAddress: request.ip }),
      );
      if (!outcome.ok)
        return sendPage(reply, LoginPage({ form: outcome.form, next: next ?? '' }), outcome.status);
      setSessionCookie(reply, deps, outcome.value);
      return seeOther(reply, safeNext(next));
    },
  );
  scope.get('/app/signup', { schema: { hide: true }, config: open }, async (_request, reply) =>
    sendPage(reply, SignupPage({ form: EMPTY_FORM })),
  );
  scope.post(
    '/app/signup',
    { schema: { hide: true, body: SignupIn }, attachValidation: true, config: open },
    async (request, reply) => {
      const outcome = await runForm(request, () =>
        service.signup(deps, request.body as Static<typeof SignupIn>, { clientAddress: request.ip }),
      );
      if (!outcome.ok) return sendPage(reply, SignupPage({ form: outcome.form }), outcome.status);
      setSessionCookie(reply, deps, outcome.value.session);
      return seeOther(reply, '/app/books');
    },
  );
  scope.post('/app/logout', { schema: { hide: true } }, async (request, reply) => {
    viewerShellOf(request);
    const token = request.cookies[SESSION_COOKIE];
    const session = token ? await service.resolveSession(deps, token) : undefined;
    if (session) await service.logout(deps, session.id);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return seeOther(reply, '/app/login');
  });
}
