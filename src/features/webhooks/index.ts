export {
  formatDeliveryLine,
  readStandardInput,
  replayCommand,
  runWorkerCommand,
  tailDeliveries,
  verifyCommand,
} from './cli-commands.ts';
export { createSenders, type Senders } from './delivery-service.ts';
export { BOOK_EVENTS, SCHEDULES_MS } from './domain.ts';
export { registerSubscriptionPages } from './page-routes.ts';
export { registerWebhookRoutes } from './routes.ts';
export { signBody, verifySignature } from './signature.ts';
export { type FailingSubscription, failingSubscriptions } from './summary.ts';
export { startWebhookWorkers, type WebhookHost, WebhookWorker, type WorkerOptions } from './worker.ts';
