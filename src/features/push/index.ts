export { registerPushPages } from './page-routes.ts';
export { registerPushAppRoutes, registerPushRoutes } from './routes.ts';
