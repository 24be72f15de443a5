export { registerShellPages } from './page-routes.ts';
export { loadShell, type ShellDeps } from './service.ts';
