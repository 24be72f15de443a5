export { type WatchDeps, type WatchReport, watchOnce } from './service.ts';
export { laggingNetworks, type WatchLag } from './summary.ts';
