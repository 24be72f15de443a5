import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import type { IntegrationCaller, SessionCaller } from './context.ts';

// Routes are typed from their schemas: a route file registers on `typedRoutes(app)`, and its
// handlers read `request.body`, `params` and `query` as the TypeBox schemas say, with no casts.
// The schemas still validate every request first; the types only follow them.

/** The app as a route file registers on it: the TypeBox type provider attached. */
export type TypedApp = ReturnType<typeof typedRoutes>;

export function typedRoutes(app: FastifyInstance) {
  return app.withTypeProvider<TypeBoxTypeProvider>();
}

/**
 * The caller the auth hook established: the signed-in person on /app routes (the default), or
 * the key on /integration routes. A route reached without one answers 401, never a crash.
 */
export function requireCaller(request: FastifyRequest): SessionCaller;
export function requireCaller(request: FastifyRequest, kind: 'session'): SessionCaller;
export function requireCaller(request: FastifyRequest, kind: 'integration'): IntegrationCaller;
export function requireCaller(
  request: FastifyRequest,
  kind: 'session' | 'integration' = 'session',
): SessionCaller | IntegrationCaller {
  const caller = kind === 'session' ? request.session : request.integration;
  if (caller === null) {
    throw new AppError('unauthorized', kind === 'session' ? 'Sign in first.' : 'Missing or unknown key.');
  }
  return caller;
}
