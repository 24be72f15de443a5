import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { routeDoc } from '../../platform/http/openapi.ts';
import { Type } from '../../platform/http/schema-kit.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
import { confirmPasswordReset, type ResetDeps, requestPasswordReset } from './password-reset.ts';
import {
  LoginIn,
  PasswordResetAccepted,
  PasswordResetConfirmIn,
  PasswordResetDone,
  PasswordResetIn,
  SessionOut,
  SignupIn,
  SignupOut,
  UserOut,
} from './schemas.ts';
import * as service from './service.ts';

export const SESSION_COOKIE = 'tb_session';
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export type UserRouteDeps = ResetDeps & { secureCookies: boolean };

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  signUp: routeDoc({
    operationId: 'signUp',
    summary: 'Sign up',
    description:
      'Creates a user and a session. The session token is in the answer and in an HttpOnly cookie; cookie callers send the csrf_token back in X-CSRF-Token on writes. An email already registered is refused.',
    tags: ['Users'],
    errors: [409, 413, 415, 422, 429],
  }),
  logIn: routeDoc({
    operationId: 'logIn',
    summary: 'Log in',
    description:
      'Opens a session for an email and password. A wrong email or password gets one answer (unauthorized) so neither is revealed; repeated failures are rate limited.',
    tags: ['Users'],
    errors: [401, 413, 415, 422, 429],
  }),
  getMe: routeDoc({
    operationId: 'getMe',
    summary: 'Read the signed-in user',
    description: 'Answers the user behind the session.',
    tags: ['Users'],
    errors: [401, 429],
  }),
  logOut: routeDoc({
    operationId: 'logOut',
    summary: 'Log out',
    description: 'Ends the session and clears its cookie.',
    tags: ['Users'],
    errors: [401, 403, 429],
  }),
  requestPasswordReset: routeDoc({
    operationId: 'requestPasswordReset',
    summary: 'Ask for a password reset link',
    description:
      'Mails a link that sets a new password to the address, if an account uses it. The answer (202) and its timing are the same whether or not it does, so nobody learns who is a user. The link works once and for 30 minutes. Asking is rate limited per address typed and per client address.',
    tags: ['Users'],
    errors: [413, 415, 422, 429],
  }),
  confirmPasswordReset: routeDoc({
    operationId: 'confirmPasswordReset',
    summary: 'Set a new password with a reset link',
    description:
      'Sets the new password when the link’s token is live and uses the token up. Every session of the account is signed out and its failed logins are forgotten, so the owner can log in at once. A token that is unknown, used or older than 30 minutes is refused with invalid_request.',
    tags: ['Users'],
    errors: [413, 415, 422, 429],
  }),
};

export function setSessionCookie(
  reply: FastifyReply,
  deps: Pick<UserRouteDeps, 'secureCookies'>,
  session: service.NewSession,
) {
  reply.setCookie(SESSION_COOKIE, session.sessionToken, {
    httpOnly: true,
    sameSite: 'lax',
    secure: deps.secureCookies,
    path: '/',
    expires: session.expiresAt,
  });
}

function sessionBody(session: service.NewSession) {
  return {
    session_token: session.sessionToken,
    csrf_token: session.csrfToken,
    expires_at: session.expiresAt.toISOString(),
  };
}

/**
 * The door of /app/api: a bearer session token (scripts) or the session cookie (browsers).
 * A cookie is sent by the browser on its own, so writes made with it must also carry the
 * CSRF token that only our page could have read.
 */
export function createSessionGuard(deps: service.UsersDeps) {
  return async (request: FastifyRequest) => {
    const header = request.headers.authorization;
    const bearer = header?.startsWith('Bearer ') ? header.slice(7).trim() : undefined;
    const cookie = request.cookies?.[SESSION_COOKIE];
    const token = bearer ?? cookie;
    const session = token ? await service.resolveSession(deps, token) : undefined;
    if (!session)
      throw new AppError('unauthorized', 'Log in first: send Authorization: Bearer <session_token>.');
    const viaCookie = bearer === undefined;
    if (
      viaCookie &&
      UNSAFE_METHODS.has(request.method) &&
      request.headers['x-csrf-token'] !== session.csrf_token
    ) {
      throw new AppError(
        'forbidden',
        'This write came with the session cookie but without its X-CSRF-Token header.',
      );
    }
    request.session = {
      userId: session.user_id,
      sessionId: session.id,
      csrfToken: session.csrf_token,
      viaCookie,
    };
  };
}

/** Public routes: signup and login. */
export function registerUserRoutes(server: FastifyInstance, deps: UserRouteDeps) {
  const app = typedRoutes(server);
  app.post(
    '/app/api/signup',
    {
      schema: {
        ...docs.signUp,
        body: SignupIn,
        response: { 201: SignupOut },
      },
    },
    async (request, reply) => {
      const { user, session } = await service.signup(deps, request.body, { clientAddress: request.ip });
      setSessionCookie(reply, deps, session);
      return reply
        .code(201)
        .send({ user: { ...user, created_at: user.created_at.toISOString() }, ...sessionBody(session) });
    },
  );
  app.post(
    '/app/api/login',
    {
      schema: {
        ...docs.logIn,
        body: LoginIn,
        response: { 200: SessionOut },
      },
    },
    async (request, reply) => {
      const session = await service.login(deps, request.body, {
        clientAddress: request.ip,
      });
      setSessionCookie(reply, deps, session);
      return sessionBody(session);
    },
  );
}

const REFUSALS = { 422: Type.Ref('ErrorBody'), 429: Type.Ref('ErrorBody') };

/** Public routes: asking for a password reset by mail, and using its link. */
export function registerPasswordResetRoutes(server: FastifyInstance, deps: UserRouteDeps) {
  const app = typedRoutes(server);
  app.post(
    '/app/api/password-reset',
    {
      schema: {
        ...docs.requestPasswordReset,
        body: PasswordResetIn,
        response: { 202: PasswordResetAccepted, ...REFUSALS },
      },
    },
    async (request, reply) => {
      const { email } = request.body;
      // The mail goes out after the answer: the answer and its timing are the same for everyone.
      await requestPasswordReset(deps, email, { clientAddress: request.ip });
      return reply.code(202).send({
        detail:
          'If an account uses this address, a link to set a new password is on its way; it works for 30 minutes.',
      });
    },
  );
  app.post(
    '/app/api/password-reset/confirm',
    {
      schema: {
        ...docs.confirmPasswordReset,
        body: PasswordResetConfirmIn,
        response: { 200: PasswordResetDone, ...REFUSALS },
      },
    },
    async (request) => {
      const { token, password } = request.body;
      await confirmPasswordReset(deps, token, password);
      return { reset: true };
    },
  );
}

/** Routes behind the session guard. */
export function registerSessionRoutes(server: FastifyInstance, deps: UserRouteDeps) {
  const app = typedRoutes(server);
  app.get(
    '/app/api/me',
    {
      schema: {
        ...docs.getMe,
        response: { 200: UserOut },
      },
    },
    async (request) => {
      const user = await service.getUser(deps, requireCaller(request).userId);
      return { ...user, created_at: user.created_at.toISOString() };
    },
  );
  app.post(
    '/app/api/logout',
    {
      schema: {
        ...docs.logOut,
        response: { 200: Type.Object({ logged_out: Type.Boolean() }) },
      },
    },
    async (request, reply) => {
      await service.logout(deps, requireCaller(request).sessionId);
      reply.clearCookie(SESSION_COOKIE, { path: '/' });
      return { logged_out: true };
    },
  );
}
