export { createSessionGuard, registerSessionRoutes, registerUserRoutes, SESSION_COOKIE } from './routes.ts';
export { createUser, findUserIdByEmail, hashPassword, type UsersDeps } from './service.ts';
