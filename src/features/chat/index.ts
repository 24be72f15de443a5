export { type ChatBot, startPolling } from './bot.ts';
export { registerChatPages } from './page-routes.ts';
export { registerChatAppRoutes, registerChatRoutes, registerTelegramWebhook } from './routes.ts';
export { type ChatDeps, invoiceChatPort, pruneChatRecords } from './service.ts';
export { type ChatSetup, setUpChat } from './setup.ts';
