export { registerPushAppRoutes, registerPushRoutes } from './routes.ts';
