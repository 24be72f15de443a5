export { registerPasswordResetPages, registerUserPages } from './page-routes.ts';
export { RESET_LIFETIME_MS, resetLink } from './password-reset.ts';
export {
  createSessionGuard,
  registerPasswordResetRoutes,
  registerSessionRoutes,
  registerUserRoutes,
  SESSION_COOKIE,
} from './routes.ts';
export {
  createUser,
  findUserIdByEmail,
  getUser,
  hashPassword,
  resolveSession,
  sessionTokenHash,
  type UsersDeps,
} from './service.ts';
