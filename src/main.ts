import { createServer } from 'node:http';
import type { Logger } from 'pino';
import { buildApp, createAppMetrics } from './app.ts';
import { type ChatSetup, setUpChat, startPolling } from './features/chat/index.ts';
import { describeLocalChain } from './features/dev-faucet/index.ts';
import { startWebhookWorkers } from './features/webhooks/index.ts';
import { housekeepingTasks } from './housekeeping.ts';
import { type Config, ConfigError, loadConfig } from './platform/config.ts';
import { startScheduler } from './platform/jobs/scheduler.ts';
import { metricsRequestHandler } from './platform/metrics.ts';
import { createRuntime } from './runtime.ts';
import { describeDemo, seedDemo } from './seed.ts';

/** Starts the HTTP server and, unless RUN_WORKERS=0, the background tasks. The only file that listens. */
export async function serve(config: Config): Promise<() => Promise<void>> {
  const runtime = await createRuntime(config, { chain: true });
  const metrics = createAppMetrics(runtime.database.db, runtime.clock);
  const chat = setUpChat(config, {
    db: runtime.database.db,
    clock: runtime.clock,
    logger: runtime.logger || undefined,
  });
  const app = await buildApp({ ...runtime, metrics, chat });
  await app.listen({ host: config.host, port: config.port });
  // The metrics port is for this machine only: bound to loopback, whatever HOST says.
  const metricsServer =
    config.metricsPort === undefined ? undefined : createServer(metricsRequestHandler(metrics));
  if (metricsServer)
    await new Promise<void>((resolve) => metricsServer.listen(config.metricsPort, '127.0.0.1', resolve));
  if (config.demo) {
    const demo = await seedDemo(runtime);
    if (demo) process.stdout.write(describeDemo(demo, config.publicUrl));
  }
  if (runtime.chain?.local) process.stdout.write(describeLocalChain(runtime.chain.local, config.publicUrl));
  const stopTasks = config.runWorkers
    ? startScheduler(housekeepingTasks(runtime, chat), runtime.logger || undefined)
    : async () => {};
  const stopChat = config.runWorkers
    ? await startChatUpdates(chat, runtime.logger || undefined)
    : async () => {};
  const stopWebhooks = config.runWorkers ? startWebhookWorkers(runtime) : async () => {};
  return async () => {
    await stopWebhooks();
    await stopChat();
    await stopTasks();
    await app.close();
    if (metricsServer) await new Promise((resolve) => metricsServer.close(resolve));
    await runtime.close();
  };
}

/** The bot's updates: Telegram is told the webhook address (https), or this process polls. */
async function startChatUpdates(chat: ChatSetup, logger: Logger | undefined): Promise<() => Promise<void>> {
  const bot = chat.bot;
  if (!bot) return async () => {};
  if (bot.webhook) {
    await bot.setWebhook().catch((error: unknown) => logger?.error({ err: error }, 'setWebhook failed'));
    return async () => {};
  }
  return startPolling(bot, (error) => logger?.warn({ err: error }, 'polling Telegram failed; retrying'));
}

export function exitOnConfigError(error: unknown): never {
  if (error instanceof ConfigError) {
    process.stderr.write(`Tollbook cannot start: ${error.message}\n`);
    process.exit(2);
  }
  throw error;
}

export async function runServer(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    exitOnConfigError(error);
  }
  const stop = await serve(config);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`Received ${signal}; stopping.\n`);
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runServer();
}
