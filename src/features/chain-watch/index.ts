export { type WatchDeps, type WatchReport, watchOnce } from './service.ts';
