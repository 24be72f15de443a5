import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { buildApp, createAppMetrics } from './app.ts';
import { type ChatSetup, setUpChat, startPolling } from './features/chat/index.ts';
import { describeLocalChain } from './features/dev-faucet/index.ts';
import { startWebhookWorkers } from './features/webhooks/index.ts';
import { housekeepingTasks } from './housekeeping.ts';
import { type Config, exitOnConfigError, loadConfig } from './platform/config.ts';
import { startScheduler } from './platform/jobs/scheduler.ts';
import { metricsRequestHandler } from './platform/metrics.ts';
import { createLogger, createRuntime } from './runtime.ts';
import { describeDemo, seedDemo } from './seed.ts';

/** One thing a stopping server closes, named for the log line when the deadline passes. */
export type StopStep = { name: string; stop: () => Promise<unknown> };

/**
 * Starts the HTTP server and, unless RUN_WORKERS=0, the background tasks. The only file that
 * listens. Answers the steps that stop it, in order: stop accepting and finish the requests in
 * flight, stop the workers, then close the pools.
 */
export async function serve(config: Config, logger?: Logger): Promise<StopStep[]> {
  const runtime = await createRuntime(config, { chain: true, ...(logger ? { logger } : {}) });
  const metrics = createAppMetrics(runtime.database.db, runtime.clock);
  const chat = setUpChat(config, {
    db: runtime.database.db,
    clock: runtime.clock,
    logger: runtime.logger || undefined,
  });
  const app = await buildApp({ ...runtime, metrics, chat });
  trackResponses(app.server);
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
  const nothing = async () => {};
  const stopTasks = config.runWorkers
    ? startScheduler(housekeepingTasks(runtime, chat), runtime.logger || undefined)
    : nothing;
  const stopChat = config.runWorkers ? await startChatUpdates(chat, runtime.logger || undefined) : nothing;
  const stopWebhooks = config.runWorkers ? startWebhookWorkers(runtime) : nothing;
  return [
    { name: 'HTTP server (requests in flight)', stop: () => closeHttp(app.server, () => app.close()) },
    {
      name: 'metrics server',
      stop: () => (metricsServer ? new Promise((resolve) => metricsServer.close(resolve)) : nothing()),
    },
    { name: 'webhook workers', stop: stopWebhooks },
    { name: 'chat updates', stop: stopChat },
    { name: 'periodic tasks', stop: stopTasks },
    { name: 'database, Redis and chain connections', stop: () => runtime.close() },
  ];
}

const liveResponses = new WeakMap<Server, Set<ServerResponse>>();

/** Keeps the responses not yet finished, so a stopping server can tell their clients to go. */
function trackResponses(server: Server): void {
  const live = new Set<ServerResponse>();
  liveResponses.set(server, live);
  server.on('request', (_request, response: ServerResponse) => {
    live.add(response);
    response.once('close', () => live.delete(response));
  });
}

/**
 * Stops accepting and lets the requests in flight finish. Their keep-alive connections would
 * otherwise stay open, idle, until the client's or the server's timeout: each unanswered one is
 * told `Connection: close`, and the idle ones are closed at once.
 */
async function closeHttp(server: Server, close: () => Promise<void>): Promise<void> {
  for (const response of liveResponses.get(server) ?? []) {
    if (!response.headersSent) response.setHeader('connection', 'close');
  }
  const closing = close();
  server.closeIdleConnections();
  await closing;
}

/** SIGTERM to exit, whatever is still open then: under the 10 seconds an orchestrator grants. */
export const SHUTDOWN_DEADLINE_MS = 8_000;

/**
 * Runs the steps in order and answers the exit code: 0 when all closed in time, 1 when one
 * failed or the deadline passed first (the log then names what was still open).
 */
export async function stopWithin(steps: StopStep[], deadlineMs: number, logger: Logger): Promise<number> {
  const open = new Set(steps.map((step) => step.name));
  let failed = false;
  const inOrder = (async () => {
    for (const step of steps) {
      try {
        await step.stop();
      } catch (error) {
        failed = true;
        logger.error({ err: error, step: step.name }, 'a step of shutdown failed');
      }
      open.delete(step.name);
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), deadlineMs);
  });
  const outcome = await Promise.race([inOrder.then(() => 'done' as const), deadline]);
  clearTimeout(timer);
  if (outcome === 'late') {
    logger.error(
      { stillOpen: [...open], deadlineMs },
      `shutdown deadline passed; still open: ${[...open].join(', ')}`,
    );
    return 1;
  }
  return failed ? 1 : 0;
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

/**
 * An error nobody handled leaves the process in a state nobody reasoned about: it is logged with
 * what is known of it, and the process exits non-zero for its supervisor to start a fresh one.
 */
function exitOnUnhandled(logger: Logger): void {
  process.on('unhandledRejection', (reason, promise) => {
    logger.fatal({ err: reason, promise: String(promise) }, 'unhandled promise rejection; exiting');
    process.exit(1);
  });
  process.on('uncaughtException', (error, origin) => {
    logger.fatal({ err: error, origin }, 'uncaught exception; exiting');
    process.exit(1);
  });
}

export async function runServer(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    exitOnConfigError(error);
  }
  const logger = createLogger(config);
  exitOnUnhandled(logger);
  const steps = await serve(config, logger);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    stopWithin(steps, SHUTDOWN_DEADLINE_MS, logger).then((code) => process.exit(code));
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runServer();
}
