export { registerPageRoutes } from './routes.ts';
