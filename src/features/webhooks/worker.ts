import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { createBatcher } from '../../platform/batch.ts';
import type { Resolver } from '../../platform/net/public-address.ts';
import {
  type Attempted,
  attemptDelivery,
  claimDueDeliveries,
  closeSenders,
  createSenders,
  type DeliveryDeps,
  fanOut,
  pruneJournal,
  recordAttempts,
  type Sendable,
} from './delivery-service.ts';

// The webhook worker: two loops over the database and a bounded set of sends in flight.
// The fan-out loop turns new outbox events into deliveries and attempts them at once; the due
// loop claims retries (and first attempts whose worker died). Results are recorded in group
// commits. Every claim is FOR UPDATE SKIP LOCKED plus a lease, so any number of processes can
// run this on one database without attempting one delivery twice at once.

export type WorkerOptions = {
  /** Rows per claim. */
  batchSize?: number;
  /** Sends in flight at once in this process. */
  concurrency?: number;
  /** Pause between polls when there was nothing to do. */
  idleMs?: number;
  /** How long a claim holds; must exceed the send timeout (10 s) with room to spare. */
  leaseMs?: number;
  /** How often the journal is pruned (30 days kept). */
  pruneEveryMs?: number;
  /** Fan-out loops in this process. */
  fanOutLoops?: number;
  /** Only these spaces' events and deliveries (tests on a shared database; dedicated workers). */
  spaceIds?: string[];
};

const DEFAULTS: Required<Omit<WorkerOptions, 'spaceIds'>> & { spaceIds?: string[] } = {
  batchSize: 200,
  concurrency: 1024,
  idleMs: 50,
  fanOutLoops: 2,
  leaseMs: 60_000,
  pruneEveryMs: 10 * 60_000,
};

export class WebhookWorker {
  private readonly options: typeof DEFAULTS;
  private readonly record: (attempt: Attempted) => Promise<void>;
  private inFlight = 0;
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly sends = new Set<Promise<void>>();
  /** Sleepers woken by stop(); the capacity ones also when a send finishes. */
  private readonly sleepers = new Set<() => void>();
  private readonly capacitySleepers = new Set<() => void>();

  constructor(
    private readonly deps: DeliveryDeps,
    options: WorkerOptions = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
    this.record = createBatcher(async (attempts: Attempted[]) => {
      await recordAttempts(deps, attempts);
      return attempts.map(() => undefined);
    }, 1000);
  }

  /**
   * One round, start to finish: fans out one batch, claims one batch of due deliveries, attempts
   * them all and records the results. Tests drive time with it; the loops below do the same
   * continuously.
   */
  async runOnce(): Promise<{ events: number; attempted: number }> {
    const lease = {
      limit: this.options.batchSize,
      leaseMs: this.options.leaseMs,
      spaceIds: this.options.spaceIds,
    };
    const fanned = await fanOut(this.deps, lease);
    const due = await claimDueDeliveries(this.deps, lease);
    const all = [...fanned.sendables, ...due];
    const attempts = await Promise.all(all.map((row) => attemptDelivery(this.deps, row)));
    await recordAttempts(this.deps, attempts);
    return { events: fanned.events, attempted: attempts.length };
  }

  /** Rounds until one finds nothing to do (bounded, so a failing test cannot spin forever). */
  async drain(roundsMax = 100): Promise<{ events: number; attempted: number }> {
    const total = { events: 0, attempted: 0 };
    for (let round = 0; round < roundsMax; round += 1) {
      const done = await this.runOnce();
      total.events += done.events;
      total.attempted += done.attempted;
      if (done.events === 0 && done.attempted === 0) break;
    }
    return total;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const lease = (limit: number) => ({
      limit,
      leaseMs: this.options.leaseMs,
      spaceIds: this.options.spaceIds,
    });
    const fanOutLoop = () =>
      this.loop('fan-out', async (room) => {
        const fanned = await fanOut(this.deps, lease(room));
        this.dispatch(fanned.sendables);
        // Any event found means more may be waiting: going again at once keeps the commit-to-send
        // delay at about one round trip under load, and batches grow by themselves.
        return fanned.events > 0;
      });
    this.loops = [
      // Two fan-out loops overlap their database round trips; SKIP LOCKED keeps their events apart.
      ...Array.from({ length: this.options.fanOutLoops }, fanOutLoop),
      this.loop('due', async (room) => {
        const due = await claimDueDeliveries(this.deps, lease(room));
        this.dispatch(due);
        return due.length >= room;
      }),
      this.pruneLoop(),
    ];
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const wake of [...this.sleepers, ...this.capacitySleepers]) wake();
    await Promise.all(this.loops);
    await Promise.all(this.sends);
  }

  /** Runs `step` with the free send capacity until stopped; idles when a step found less than it asked. */
  private async loop(name: string, step: (room: number) => Promise<boolean>): Promise<void> {
    while (this.running) {
      const room = Math.min(this.options.batchSize, this.options.concurrency - this.inFlight);
      if (room <= 0) {
        await this.waitForWake(this.options.idleMs, this.capacitySleepers);
        continue;
      }
      let busy = false;
      try {
        busy = await step(room);
      } catch (error) {
        this.deps.logger?.error({ err: error, loop: name }, 'webhook worker step failed');
      }
      if (!busy && this.running) await this.waitForWake(this.options.idleMs, this.sleepers);
    }
  }

  private async pruneLoop(): Promise<void> {
    while (this.running) {
      try {
        await pruneJournal(this.deps, { spaceIds: this.options.spaceIds });
      } catch (error) {
        this.deps.logger?.error({ err: error }, 'webhook journal pruning failed');
      }
      await this.waitForWake(this.options.pruneEveryMs, this.sleepers);
    }
  }

  private dispatch(rows: Sendable[]): void {
    for (const row of rows) {
      this.inFlight += 1;
      const send = attemptDelivery(this.deps, row)
        .then((attempt) => this.record(attempt))
        .catch((error: unknown) => {
          // The lease lapses and another round retries it; nothing is lost.
          this.deps.logger?.error({ err: error, delivery: row.id }, 'webhook attempt could not be recorded');
        })
        .finally(() => {
          this.inFlight -= 1;
          this.sends.delete(send);
          for (const wake of this.capacitySleepers) wake();
        });
      this.sends.add(send);
    }
  }

  private async waitForWake(ms: number, sleepers: Set<() => void>): Promise<void> {
    if (!this.running) return;
    const controller = new AbortController();
    const wake = () => controller.abort();
    sleepers.add(wake);
    await sleep(ms, undefined, { signal: controller.signal }).catch(() => {});
    sleepers.delete(wake);
  }
}

/** What a process hands the webhook worker: the runtime's pieces (structurally, so no import upward). */
export type WebhookHost = {
  database: { db: DeliveryDeps['db'] };
  clock: DeliveryDeps['clock'];
  secrets: DeliveryDeps['secrets'];
  resolver: Resolver;
  config: { webhookAllowPrivate: boolean; webhookAllowList: readonly string[] };
  logger: Logger | false;
};

/** Starts the webhook worker in this process; the returned function stops it and waits for it. */
export function startWebhookWorkers(host: WebhookHost, options: WorkerOptions = {}): () => Promise<void> {
  const senders = createSenders({
    allowPrivate: host.config.webhookAllowPrivate,
    allowList: host.config.webhookAllowList,
    resolver: host.resolver,
  });
  const worker = new WebhookWorker(
    {
      db: host.database.db,
      clock: host.clock,
      secrets: host.secrets,
      senders,
      logger: host.logger === false ? undefined : host.logger,
    },
    options,
  );
  worker.start();
  return async () => {
    await worker.stop();
    await closeSenders(senders);
  };
}
