export { registerUserPages } from './page-routes.ts';
export { createSessionGuard, registerSessionRoutes, registerUserRoutes, SESSION_COOKIE } from './routes.ts';
export {
  createUser,
  findUserIdByEmail,
  getUser,
  hashPassword,
  resolveSession,
  type UsersDeps,
} from './service.ts';
