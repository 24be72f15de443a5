import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { EMPTY_FORM } from '../../platform/web/components.tsx';
import { formRoute, runForm } from '../../platform/web/forms.ts';
import { SESSION_COOKIE, seeOther, sendPage, viewerShellOf } from '../../platform/web/plumbing.ts';
import {
  ForgotPasswordPage,
  LinkSentPage,
  LoginPage,
  PasswordResetDonePage,
  ResetLinkRefusedPage,
  ResetPasswordPage,
  SignupPage,
} from './pages.tsx';
import {
  confirmPasswordReset,
  type ResetDeps,
  type ResetLinkState,
  requestPasswordReset,
  resetLinkState,
} from './password-reset.ts';
import { SESSION_COOKIE as API_SESSION_COOKIE, setSessionCookie } from './routes.ts';
import { LoginIn, PasswordResetConfirmIn, PasswordResetIn, SignupIn } from './schemas.ts';
import * as service from './service.ts';

const NextQuery = Type.Object({ next: Type.Optional(Type.String({ maxLength: 2000 })) });
const TokenQuery = Type.Object({ token: Type.Optional(Type.String({ maxLength: 2000 })) });
/** The app API's confirm body, and the password typed a second time. */
const ResetPasswordForm = Type.Object({
  ...PasswordResetConfirmIn.properties,
  password_confirm: Type.String({ minLength: 1, maxLength: 200 }),
});

// The pages and the API share one cookie: a person logged in here is logged in to /app/api.
if (SESSION_COOKIE !== API_SESSION_COOKIE)
  throw new Error('The web app and the API must share the session cookie.');

/** Only a path inside the app is followed after logging in (never another site). */
function safeNext(next: string | undefined): string {
  return next && /^\/app(\/|$|\?)/.test(next) && !next.startsWith('//') ? next : '/app';
}

export function registerUserPages(
  server: FastifyInstance,
  deps: service.UsersDeps & { secureCookies: boolean },
) {
  const scope = typedRoutes(server);
  const open = { webPublic: true };
  scope.get(
    '/app/login',
    { schema: { hide: true, querystring: NextQuery }, config: open },
    async (request, reply) =>
      sendPage(reply, LoginPage({ form: EMPTY_FORM, next: request.query.next ?? '' })),
  );
  scope.post(
    '/app/login',
    formRoute({ querystring: NextQuery, body: LoginIn }, open),
    async (request, reply) => {
      const next = request.query.next;
      const outcome = await runForm(request, ({ body }) =>
        service.login(deps, body, { clientAddress: request.ip }),
      );
      if (!outcome.ok)
        return sendPage(reply, LoginPage({ form: outcome.form, next: next ?? '' }), outcome.status);
      setSessionCookie(reply, deps, outcome.value);
      return seeOther(reply, safeNext(next));
    },
  );
  scope.get(
    '/app/signup',
    { schema: { hide: true, querystring: NextQuery }, config: open },
    async (request, reply) =>
      sendPage(reply, SignupPage({ form: EMPTY_FORM, next: request.query.next ?? '' })),
  );
  scope.post(
    '/app/signup',
    formRoute({ querystring: NextQuery, body: SignupIn }, open),
    async (request, reply) => {
      const next = request.query.next;
      const outcome = await runForm(request, ({ body }) =>
        service.signup(deps, body, { clientAddress: request.ip }),
      );
      if (!outcome.ok)
        return sendPage(reply, SignupPage({ form: outcome.form, next: next ?? '' }), outcome.status);
      setSessionCookie(reply, deps, outcome.value.session);
      return seeOther(reply, next === undefined ? '/app/books' : safeNext(next));
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

/** The reset pages carry the link's token: no Referer, so it never reaches another origin. */
const noReferrer = async (_request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
  reply.header('referrer-policy', 'no-referrer');
  return payload;
};

const REFUSED_STATUS: Record<Exclude<ResetLinkState, 'live'>, number> = {
  used: 410,
  expired: 410,
  unknown: 404,
};

/**
 * Forgot password → a link by mail → choose a new password: plain form posts (no session, so
 * no CSRF token; the plumbing refuses posts from other sites), calling the same functions as
 * POST /app/api/password-reset and /confirm.
 */
export function registerPasswordResetPages(server: FastifyInstance, deps: ResetDeps) {
  const scope = typedRoutes(server);
  const open = { webPublic: true };
  scope.get('/app/forgot-password', { schema: { hide: true }, config: open }, async (_request, reply) =>
    sendPage(reply, ForgotPasswordPage({ form: EMPTY_FORM })),
  );
  scope.post('/app/forgot-password', formRoute({ body: PasswordResetIn }, open), async (request, reply) => {
    const outcome = await runForm(request, ({ body }) =>
      requestPasswordReset(deps, body.email, { clientAddress: request.ip }),
    );
    if (!outcome.ok) return sendPage(reply, ForgotPasswordPage({ form: outcome.form }), outcome.status);
    // The mail goes out after the answer, whatever the address: the same page for everyone.
    return seeOther(reply, '/app/forgot-password/sent');
  });
  scope.get('/app/forgot-password/sent', { schema: { hide: true }, config: open }, async (_request, reply) =>
    sendPage(reply, LinkSentPage()),
  );
  scope.get(
    '/app/reset-password',
    { schema: { hide: true, querystring: TokenQuery }, config: open, onSend: noReferrer },
    async (request, reply) => {
      const token = request.query.token ?? '';
      const state = await resetLinkState(deps, token);
      if (state !== 'live') return sendPage(reply, ResetLinkRefusedPage({ state }), REFUSED_STATUS[state]);
      return sendPage(reply, ResetPasswordPage({ token, form: EMPTY_FORM }));
    },
  );
  scope.post(
    '/app/reset-password',
    { ...formRoute({ body: ResetPasswordForm }, open), onSend: noReferrer },
    async (request, reply) => {
      const outcome = await runForm(request, async ({ body }) => {
        if (body.password !== body.password_confirm) {
          throw new AppError('invalid_request', 'The two passwords differ; type the same one twice.', {
            field: 'password_confirm',
          });
        }
        await confirmPasswordReset(deps, body.token, body.password);
      });
      if (outcome.ok) return seeOther(reply, '/app/reset-password/done');
      // Refused: the token as it was sent fills the form again, or names the link refused.
      const sent = outcome.form.values.token;
      const token = typeof sent === 'string' ? sent : '';
      if (outcome.form.errors.token !== undefined) {
        const state = await resetLinkState(deps, token);
        if (state !== 'live') return sendPage(reply, ResetLinkRefusedPage({ state }), REFUSED_STATUS[state]);
      }
      return sendPage(reply, ResetPasswordPage({ token, form: outcome.form }), outcome.status);
    },
  );
  scope.get('/app/reset-password/done', { schema: { hide: true }, config: open }, async (_request, reply) =>
    sendPage(reply, PasswordResetDonePage()),
  );
}
