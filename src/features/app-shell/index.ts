export { registerShellPages } from './page-routes.ts';
export { loadViewer, type ShellDeps } from './service.ts';
