export { runAgentMcpStdio } from './mcp.ts';
export { registerAgentPages } from './page-routes.ts';
export { REPAIR_GRACE_MS, type RepairReport, repairAgentWrites } from './repair.ts';
export { registerAgentAppRoutes, registerAgentRoutes } from './routes.ts';
export { type AgentsDeps, lapseProposals, listProposals } from './service.ts';
export { walletAccountForWatch, watchedAgentWallets } from './wallet-watch.ts';
