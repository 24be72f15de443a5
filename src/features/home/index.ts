export { registerHomePages } from './page-routes.ts';
export { type Home, type HomeDeps, readHome } from './service.ts';
