import type { Logger } from 'pino';

// Periodic housekeeping in every server process. Each task must be safe to run in several
// processes at once (they claim rows with FOR UPDATE SKIP LOCKED or delete idempotently).

export type PeriodicTask = { name: string; everyMs: number; run: () => Promise<unknown> };

export function startScheduler(tasks: PeriodicTask[], logger: Logger | undefined): () => Promise<void> {
  const timers: NodeJS.Timeout[] = [];
  const running = new Set<Promise<unknown>>();
  let stopped = false;
  for (const task of tasks) {
    let busy = false;
    const tick = () => {
      if (busy || stopped) return;
      busy = true;
      const run = task
        .run()
        .catch((error: unknown) => logger?.error({ err: error, task: task.name }, 'periodic task failed'))
        .finally(() => {
          busy = false;
          running.delete(run);
        });
      running.add(run);
    };
    const timer = setInterval(tick, task.everyMs);
    timer.unref();
    timers.push(timer);
    setImmediate(tick);
  }
  return async () => {
    stopped = true;
    for (const timer of timers) clearInterval(timer);
    await Promise.all(running);
  };
}
