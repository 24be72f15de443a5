import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { Type } from '../../platform/http/schema-kit.ts';
import { LoginIn, SessionOut, SignupIn, SignupOut, UserOut } from './schemas.ts';
import * as service from './service.ts';

export const SESSION_COOKIE = 'tb_session';
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export type UserRouteDeps = service.UsersDeps & { secureCookies: boolean };

export function setSessionCookie(reply: FastifyReply, deps: UserRouteDeps, session: service.NewSession) {
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
export function registerUserRoutes(app: FastifyInstance, deps: UserRouteDeps) {
  app.post(
    '/app/api/signup',
    { schema: { tags: ['app'], body: SignupIn, response: { 201: SignupOut } } },
    async (request, reply) => {
      const body = request.body as { email: string; password: string; name: string };
      const { user, session } = await service.signup(deps, body);
      setSessionCookie(reply, deps, session);
      return reply
        .code(201)
        .send({ user: { ...user, created_at: user.created_at.toISOString() }, ...sessionBody(session) });
    },
  );
  app.post(
    '/app/api/login',
    { schema: { tags: ['app'], body: LoginIn, response: { 200: SessionOut } } },
    async (request, reply) => {
      const session = await service.login(deps, request.body as { email: string; password: string });
      setSessionCookie(reply, deps, session);
      return sessionBody(session);
    },
  );
}

/** Routes behind the session guard. */
export function registerSessionRoutes(app: FastifyInstance, deps: UserRouteDeps) {
  app.get('/app/api/me', { schema: { tags: ['app'], response: { 200: UserOut } } }, async (request) => {
    const user = await service.getUser(deps, request.session!.userId);
    return { ...user, created_at: user.created_at.toISOString() };
  });
  app.post(
    '/app/api/logout',
    { schema: { tags: ['app'], response: { 200: Type.Object({ logged_out: Type.Boolean() }) } } },
    async (request, reply) => {
      await service.logout(deps, request.session!.sessionId);
      reply.clearCookie(SESSION_COOKIE, { path: '/' });
      return { logged_out: true };
    },
  );
}
