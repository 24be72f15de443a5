export { runAgentMcpStdio } from './mcp.ts';
export { registerAgentPages } from './page-routes.ts';
export { registerAgentAppRoutes, registerAgentRoutes } from './routes.ts';
export { type AgentsDeps, lapseProposals } from './service.ts';
