// Webhook delivery benchmark (issue 4): how many key-channel deliveries per second one process
// sends to a local receiver that answers 200 at once, and the latency from the producer's commit
// to the receiver's receipt (p50/p99) at a steady 2,000 events/s. The worker runs in this
// process against a fresh PostgreSQL database; the receiver is its own process, so the two do
// not share an event loop. Targets: >= 2,000 deliveries/s, p99 < 250 ms.

import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueKey } from '../src/features/keys/index.ts';
import { createSpace } from '../src/features/spaces/index.ts';
import { createUser } from '../src/features/users/index.ts';
import { startWebhookWorkers } from '../src/features/webhooks/index.ts';
import { loadConfig } from '../src/platform/config.ts';
import { type Db, openDatabase } from '../src/platform/db/database.ts';
import { enqueueEvent } from '../src/platform/outbox/outbox.ts';
import { createRuntime, type Runtime } from '../src/runtime.ts';
import { samplePaymentRequestPaid } from '../test/sample-events.ts';
import {
  type BenchContext,
  type BenchReport,
  dropDatabase,
  emptyReport,
  errorText,
  fmt,
  freshDatabase,
  waitForQuiet,
} from './lib.ts';

const BENCH = 'webhooks';
const DATABASE = 'tollbook_bench_webhooks';
const BACKLOG_EVENTS = 20_000;
const RATE_PER_SECOND = 2_000;
const RATE_SECONDS = 10;
const TICK_MS = 10;
const THROUGHPUT_TARGET = 2_000;
const P99_BUDGET_MS = 250;

// The receiver: answers 200 at once and remembers when each event id first arrived.
const RECEIVER_SOURCE = `
const http = require('node:http');
const seen = new Map();
let wanted = Infinity;
const now = () => performance.timeOrigin + performance.now();
const server = http.createServer((req, res) => {
  const id = req.headers['x-service-event-id'];
  req.resume();
  req.on('end', () => {
    if (!seen.has(id)) seen.set(id, now());
    res.writeHead(200).end();
    if (seen.size >= wanted) { wanted = Infinity; process.send({ kind: 'reached', at: now() }); }
  });
});
server.keepAliveTimeout = 60000;
process.on('message', (message) => {
  if (message.kind === 'expect') {
    wanted = message.count;
    if (seen.size >= wanted) { wanted = Infinity; process.send({ kind: 'reached', at: now() }); }
  }
  if (message.kind === 'report') process.send({ kind: 'report', ids: [...seen.keys()], times: [...seen.values()] });
  if (message.kind === 'reset') seen.clear();
});
server.listen(0, '127.0.0.1', () => process.send({ kind: 'ready', port: server.address().port }));
`;

type ReceiverMessage =
  | { kind: 'ready'; port: number }
  | { kind: 'reached'; at: number }
  | { kind: 'report'; ids: string[]; times: number[] };

const now = () => performance.timeOrigin + performance.now();

export type Target = { spaceId: string; keyId: string };

export function startReceiverProcess(): Promise<{ child: ChildProcess; port: number }> {
  const file = join(mkdtempSync(join(tmpdir(), 'tollbook-bench-receiver-')), 'receiver.cjs');
  writeFileSync(file, RECEIVER_SOURCE);
  const child = fork(file, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (message: ReceiverMessage) => {
      if (message.kind === 'ready') resolve({ child, port: message.port });
    });
    child.once('exit', (code) => reject(new Error(`the receiver exited with ${code}`)));
  });
}

function ask<T extends ReceiverMessage['kind']>(
  child: ChildProcess,
  message: object,
  answer: T,
  timeoutMs: number,
): Promise<Extract<ReceiverMessage, { kind: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no '${answer}' from the receiver in ${timeoutMs} ms`)),
      timeoutMs,
    );
    const listen = (reply: ReceiverMessage) => {
      if (reply.kind !== answer) return;
      clearTimeout(timer);
      child.off('message', listen);
      resolve(reply as Extract<ReceiverMessage, { kind: T }>);
    };
    child.on('message', listen);
    child.send(message);
  });
}

export async function setUp(runtime: Runtime, port: number): Promise<Target> {
  const db = runtime.database.db;
  const clock = runtime.clock;
  const owner = await createUser(
    { db, clock },
    { email: 'bench@example.com', password: 'bench-password-1', name: 'Bench' },
  );
  const space = await createSpace({ db, clock, authStamps: runtime.authStamps }, owner.id, {
    name: 'Bench',
    base_currency: 'USD',
    plan: 'pro',
  });
  const deps = {
    db,
    clock,
    secrets: runtime.secrets,
    authStamps: runtime.authStamps,
    resolver: runtime.resolver,
    webhookAllowPrivate: true,
  };
  const key = await issueKey(deps, owner.id, space.id, {
    name: 'bench',
    scopes: ['payments'],
    webhook_url: `http://127.0.0.1:${port}/hook`,
  });
  return { spaceId: space.id, keyId: key.id };
}

/** Commits `count` key events in transactions of `perCommit`; returns each id with its commit time. */
async function produce(producer: Db, target: Target, count: number, perCommit: number) {
  const committed = new Map<string, number>();
  for (let done = 0; done < count; done += perCommit) {
    const ids = await producer.transaction().execute(async (tx) => {
      const made: string[] = [];
      for (let index = 0; index < Math.min(perCommit, count - done); index += 1) {
        made.push(
          await enqueueEvent(
            tx,
            samplePaymentRequestPaid({ spaceId: target.spaceId, keyId: target.keyId, at: new Date() }),
          ),
        );
      }
      return made;
    });
    const at = now();
    for (const id of ids) committed.set(id, at);
  }
  return committed;
}

/** Phase 1: a backlog is committed first, then the worker starts; deliveries/s until the last arrives. */
export async function measureThroughput(
  runtime: Runtime,
  producer: Db,
  receiver: ChildProcess,
  target: Target,
) {
  await produce(producer, target, BACKLOG_EVENTS, 500);
  const reached = ask(receiver, { kind: 'expect', count: BACKLOG_EVENTS }, 'reached', 120_000);
  const cpuBefore = process.cpuUsage();
  const started = now();
  const stop = startWebhookWorkers(runtime);
  try {
    const { at } = await reached;
    const cpu = process.cpuUsage(cpuBefore);
    const seconds = (at - started) / 1000;
    return {
      rate: BACKLOG_EVENTS / seconds,
      seconds,
      cpuPct: (100 * (cpu.user + cpu.system)) / 1e6 / seconds,
    };
  } finally {
    await stop();
  }
}

function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
}

/** Phase 2: the worker runs; events are committed at a steady rate; commit-to-receipt latency. */
async function measureLatency(runtime: Runtime, producer: Db, receiver: ChildProcess, target: Target) {
  receiver.send({ kind: 'reset' });
  const stop = startWebhookWorkers(runtime);
  const committed = new Map<string, number>();
  const perTick = (RATE_PER_SECOND * TICK_MS) / 1000;
  const ticks = (RATE_SECONDS * 1000) / TICK_MS;
  const started = now();
  try {
    const pending: Promise<void>[] = [];
    for (let tick = 0; tick < ticks; tick += 1) {
      // Ticks are scheduled on the wall clock, so a slow commit does not lower the offered rate.
      const due = started + tick * TICK_MS;
      const wait = due - now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      pending.push(
        produce(producer, target, perTick, perTick).then((made) => {
          for (const [id, at] of made) committed.set(id, at);
        }),
      );
    }
    await Promise.all(pending);
    const offered = committed.size / ((now() - started) / 1000);
    await ask(receiver, { kind: 'expect', count: committed.size }, 'reached', 60_000);
    const report = await ask(receiver, { kind: 'report' }, 'report', 30_000);
    const latencies = report.ids
      .map((id, index) => report.times[index]! - (committed.get(id) ?? Number.NaN))
      .filter((value) => Number.isFinite(value))
      .sort((a, b) => a - b);
    return {
      offered,
      count: latencies.length,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
    };
  } finally {
    await stop();
  }
}

async function run(ctx: BenchContext, report: BenchReport): Promise<void> {
  const databaseUrl = await freshDatabase(ctx.facts.pgAdminUrl, DATABASE);
  const receiver = await startReceiverProcess();
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    DATA_DIR: mkdtempSync(join(tmpdir(), 'tollbook-bench-webhooks-')),
    WEBHOOK_ALLOW_PRIVATE: '1',
    LOG_LEVEL: 'silent',
    DATABASE_POOL_SIZE: '10',
  });
  const runtime = await createRuntime(config, { logger: false, masterKey: randomBytes(32).toString('hex') });
  // The producer has its own connections, as another server process would.
  const producer = await openDatabase({ databaseUrl, poolSize: 10 });
  try {
    const target = await setUp(runtime, receiver.port);
    ctx.log(
      `  receiver pid ${receiver.child.pid} on 127.0.0.1:${receiver.port}; worker in this process (pid ${process.pid})`,
    );
    // Other processes on the machine distort both figures: wait (bounded) for quiet first.
    const quietBefore = await waitForQuiet(15_000);
    const throughput = await measureThroughput(runtime, producer.db, receiver.child, target);
    ctx.log(
      `    backlog of ${fmt(BACKLOG_EVENTS)} key events: ${fmt(throughput.rate)} deliveries/s ` +
        `(${fmt(throughput.seconds, 2)} s; worker process cpu ${fmt(throughput.cpuPct)}% of one core)`,
    );
    const quietBetween = await waitForQuiet(15_000);
    const latency = await measureLatency(runtime, producer.db, receiver.child, target);
    const contaminated = !quietBefore.quiet || !quietBetween.quiet;
    if (contaminated)
      ctx.log('    ! the machine never went quiet before a phase: these figures are contaminated');
    ctx.log(
      `    steady ${fmt(latency.offered)} events/s for ${RATE_SECONDS} s: commit-to-receipt p50 ${fmt(latency.p50, 1)} ms, ` +
        `p99 ${fmt(latency.p99, 1)} ms over ${fmt(latency.count)} deliveries`,
    );
    report.rows.push({
      bench: BENCH,
      config: 'postgres',
      route: 'key webhook deliveries',
      rps: throughput.rate,
      p50: latency.p50,
      p99: latency.p99,
      non2xx: 0,
      errors: 0,
      serverCpu: throughput.cpuPct,
      otherCpu: null,
    });
    const common = { bench: BENCH, config: 'postgres', contaminated };
    report.targets.push({
      ...common,
      what: 'deliveries/s (backlog)',
      value: throughput.rate,
      target: THROUGHPUT_TARGET,
      pass: throughput.rate >= THROUGHPUT_TARGET,
    });
    report.targets.push({
      ...common,
      what: `${P99_BUDGET_MS} ms / p99 latency at 2k/s`,
      value: P99_BUDGET_MS / latency.p99,
      target: 1,
      pass: latency.p99 < P99_BUDGET_MS,
    });
  } finally {
    await producer.close();
    await runtime.close();
    receiver.child.kill();
    await dropDatabase(ctx.facts.pgAdminUrl, DATABASE).catch((error) => {
      ctx.log(`  could not drop ${DATABASE}: ${errorText(error)}`);
    });
  }
}

export async function benchWebhooks(ctx: BenchContext): Promise<BenchReport> {
  const report = emptyReport();
  if (!ctx.facts.pg.ok) {
    const why = `PostgreSQL not reachable at ${ctx.facts.pgAdminUrl} (${ctx.facts.pg.reason})`;
    report.skipped.push(`${BENCH}: ${why}`);
    ctx.log(`  skipped: ${why}`);
    return report;
  }
  try {
    await run(ctx, report);
  } catch (error) {
    report.failures.push(`${BENCH}: ${errorText(error)}`);
    ctx.log(`  FAILED: ${errorText(error)}`);
  }
  return report;
}
