export { createKeyDoor, type KeyDoor } from './door.ts';
export { registerKeyPages } from './page-routes.ts';
export { registerKeyRoutes, registerPingRoute } from './routes.ts';
export { issueKey, type KeyIssueInput, type KeysDeps, remindExpiringKeys, revokeKey } from './service.ts';
export { hasAnyKey } from './summary.ts';
