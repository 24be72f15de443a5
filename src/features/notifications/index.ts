export { registerNotificationRoutes } from './routes.ts';
export { insertNotification, type NewNotification } from './store.ts';
