export { frameAncestors } from './domain.ts';
export { registerSitePages } from './page-routes.ts';
export { registerSiteAppRoutes } from './routes.ts';
export { framingOrigins, type SitesDeps } from './service.ts';
