export { registerNotificationPages } from './page-routes.ts';
export { registerNotificationRoutes } from './routes.ts';
export { listForMember } from './service.ts';
export { insertNotification, type NewNotification } from './store.ts';
