export { registerEndpointAppRoutes } from './routes.ts';
export { fileResource, getResource, listDiscoverable } from './service.ts';
