// Shared machinery for the benchmark scripts: machine facts, fresh databases, a server child
// process, autocannon runs and per-process CPU accounting. Each benchmark lives in its own file
// and exports an async function of type BenchFn; bench/run.ts calls them in turn.

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import pg from 'pg';
import { serverNodeFlags } from '../bin/node-flags.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// ---------------------------------------------------------------------------------------------
// Contract between bench/run.ts and the benchmark files.

export type BenchSettings = {
  connections: number;
  pipelining: number;
  warmupSeconds: number;
  durationSeconds: number;
};

export type Facts = {
  node: string;
  cpus: number;
  cpuModel: string;
  pgAdminUrl: string;
  pg: { ok: true; version: string } | { ok: false; reason: string };
  redisUrl: string;
  redis: { ok: true; version: string } | { ok: false; reason: string };
};

export type BenchContext = {
  facts: Facts;
  settings: BenchSettings;
  log: (line?: string) => void;
};

export type ResultRow = {
  bench: string;
  config: string;
  route: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Server process CPU during the measured run, % of one core; null when it could not be read. */
  serverCpu: number | null;
  /** CPU used by unrelated processes during the measured run, % of one core; null if unknown. */
  otherCpu: number | null;
};

export type TargetCheck = {
  bench: string;
  config: string;
  what: string;
  value: number;
  target: number;
  pass: boolean;
  /** The figure must stay at or below the target (a latency), not reach it. */
  atMost?: boolean;
  /** Other processes were busy during one of the runs behind this figure. */
  contaminated: boolean;
};

export type BenchReport = {
  rows: ResultRow[];
  targets: TargetCheck[];
  skipped: string[];
  /** Things that broke the measurement itself (server did not start, wrong answers...). */
  failures: string[];
};

export type BenchFn = (ctx: BenchContext) => Promise<BenchReport>;

export function emptyReport(): BenchReport {
  return { rows: [], targets: [], skipped: [], failures: [] };
}

export function envInteger(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name} must be an integer >= ${min}; it is "${raw}".`);
  return value;
}

/** Defaults per the foundation issue; BENCH_* variables allow quick local runs. */
export function readSettings(): BenchSettings {
  return {
    connections: envInteger('BENCH_CONNECTIONS', 50, 1),
    pipelining: envInteger('BENCH_PIPELINING', 1, 1),
    warmupSeconds: envInteger('BENCH_WARMUP', 2, 0),
    durationSeconds: envInteger('BENCH_DURATION', 8, 1),
  };
}

// ---------------------------------------------------------------------------------------------
// Machine facts.

export function errorText(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.map((inner) => errorText(inner)).join('; ');
  }
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

async function withPg<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => {});
  }
}

async function pgFacts(adminUrl: string): Promise<Facts['pg']> {
  try {
    const version = await withPg(adminUrl, async (client) => {
      const result = await client.query<{ server_version: string }>('SHOW server_version');
      return result.rows[0]?.server_version ?? 'unknown';
    });
    return { ok: true, version };
  } catch (error) {
    return { ok: false, reason: errorText(error) };
  }
}

async function redisFacts(url: string): Promise<Facts['redis']> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    const pong = await redis.ping();
    if (pong !== 'PONG') return { ok: false, reason: `PING answered ${pong}` };
    const info = await redis.info('server').catch(() => '');
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
    return { ok: true, version };
  } catch (error) {
    return { ok: false, reason: errorText(error) };
  } finally {
    redis.disconnect();
  }
}

export async function gatherFacts(): Promise<Facts> {
  const pgAdminUrl = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
  const cpus = os.cpus();
  const [pgResult, redisResult] = await Promise.all([pgFacts(pgAdminUrl), redisFacts(redisUrl)]);
  return {
    node: process.version,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    pgAdminUrl,
    pg: pgResult,
    redisUrl,
    redis: redisResult,
  };
}

// ---------------------------------------------------------------------------------------------
// Databases.

function checkDatabaseName(name: string): void {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsafe database name "${name}"`);
}

async function dropIfExists(client: pg.Client, name: string): Promise<void> {
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } catch {
    await client.query(`DROP DATABASE IF EXISTS ${name}`);
  }
}

/**
 * The database a benchmark uses for `name`: BENCH_DATABASE_SUFFIX (say `_h16`) keeps the
 * benchmarks of several checkouts sharing one PostgreSQL server out of each other's databases.
 */
export function benchDatabaseName(name: string): string {
  return `${name}${process.env.BENCH_DATABASE_SUFFIX ?? ''}`;
}

/** Drops and recreates `name`; returns its URL (same server and credentials as the admin URL). */
export async function freshDatabase(adminUrl: string, wanted: string): Promise<string> {
  const name = benchDatabaseName(wanted);
  checkDatabaseName(name);
  await withPg(adminUrl, async (client) => {
    await dropIfExists(client, name);
    await client.query(`CREATE DATABASE ${name}`);
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabase(adminUrl: string, wanted: string): Promise<void> {
  const name = benchDatabaseName(wanted);
  checkDatabaseName(name);
  await withPg(adminUrl, (client) => dropIfExists(client, name));
}

// ---------------------------------------------------------------------------------------------
// The server child process.

const liveChildren = new Set<ChildProcess>();

/** Last-resort cleanup: SIGKILL every server child still running. */
export function killAllChildren(): void {
  for (const child of liveChildren) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  liveChildren.clear();
}
process.on('exit', killAllChildren);

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

// Settings the server reads; stripped from the inherited environment so only ours apply.
const SERVER_VARS = [
  'NODE_ENV',
  'PORT',
  'HOST',
  'PUBLIC_URL',
  'DATA_DIR',
  'DATABASE_URL',
  'DATABASE_POOL_SIZE',
  'REDIS_URL',
  'MASTER_KEY',
  'LOG_LEVEL',
  'WEBHOOK_ALLOW_PRIVATE',
  'RUN_WORKERS',
  'DEMO',
  'RATE_LIMIT_PER_MINUTE',
];

export type ServerOptions = {
  databaseUrl?: string;
  redisUrl?: string;
  /** Extra environment for the server, applied last. */
  env?: Record<string, string>;
  startTimeoutMs?: number;
};

export type ServerHandle = {
  pid: number;
  baseUrl: string;
  /** The demo integration key printed on an empty database. */
  key: string | undefined;
  /** Output lines written after the server became ready (warnings under load, say). */
  linesSinceReady(): { count: number; sample: string[] };
  stop(): Promise<void>;
};

class OutputBuffer {
  private text = '';
  private ready = false;
  private partial = '';
  readyLines = 0;
  readySample: string[] = [];

  push(chunk: string): void {
    this.text = (this.text + chunk).slice(-64_000);
    if (!this.ready) return;
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      this.readyLines += 1;
      if (this.readySample.length < 5) this.readySample.push(line.slice(0, 300));
    }
  }
  markReady(): void {
    this.ready = true;
  }
  all(): string {
    return this.text;
  }
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function answers200(url: string, headers?: Record<string, string>): Promise<boolean> {
  try {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/**
 * BENCH_SERVER=dist: the server is the production build (`npm run build` first), `node dist/main.js`,
 * instead of the sources under tsx.
 */
export function benchRunsBuild(): boolean {
  return process.env.BENCH_SERVER === 'dist';
}

/**
 * Spawns the server (the sources under tsx, or the production build with BENCH_SERVER=dist) with a
 * demo space on a fresh data dir, waits until `/livez` answers 200 and (when expectKey) the demo
 * block has printed the integration key.
 */
export async function startServer(options: ServerOptions & { expectKey?: boolean }): Promise<ServerHandle> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollbook-bench-'));
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of SERVER_VARS) delete env[name];
  Object.assign(env, {
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    DEMO: '1',
    RUN_WORKERS: '0',
    DATA_DIR: dataDir,
    MASTER_KEY: randomBytes(32).toString('hex'),
  });
  if (options.databaseUrl) env.DATABASE_URL = options.databaseUrl;
  if (options.redisUrl) env.REDIS_URL = options.redisUrl;
  Object.assign(env, options.env ?? {});

  // The server's node runs with the flags `npm start` gives it (bin/node-flags.mjs reads them from
  // package.json, their one place); BENCH_NODE_ARGS adds flags (for instance --cpu-prof) when
  // profiling. The entry is started as `npm start` starts the sources, or as the container starts
  // the build.
  const nodeArgs = [...serverNodeFlags(), ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  const entry = benchRunsBuild()
    ? ['--import', './dist/telemetry.js', 'dist/main.js']
    : ['--import', 'tsx', '--import', './src/telemetry.ts', 'src/main.ts'];
  const child = spawn(process.execPath, [...nodeArgs, ...entry], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  liveChildren.add(child);
  const output = new OutputBuffer();
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));

  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const stopped = await Promise.race([exited.then(() => true), wait(5000).then(() => false)]);
      if (!stopped) {
        child.kill('SIGKILL');
        await Promise.race([exited, wait(2000)]);
      }
    }
    liveChildren.delete(child);
    rmSync(dataDir, { recursive: true, force: true });
  };

  const tail = () =>
    output
      .all()
      .trim()
      .split('\n')
      .slice(-15)
      .map((line) => `    | ${line}`)
      .join('\n');
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  let failure: string | undefined;
  let key: string | undefined;
  let childError: Error | undefined;
  spawnError.then((error) => {
    childError = error;
  });
  for (;;) {
    key ??= /Integration key:\s*(oit_[A-Za-z0-9_-]+)/.exec(output.all())?.[1];
    if (childError) {
      failure = `could not spawn the server: ${childError.message}`;
      break;
    }
    if (child.exitCode !== null || child.signalCode !== null) {
      failure = `the server exited during start-up (code ${child.exitCode}, signal ${child.signalCode})`;
      break;
    }
    if ((key || !options.expectKey) && (await answers200(`${baseUrl}/livez`))) break;
    if (Date.now() > deadline) {
      failure = key
        ? 'GET /livez did not answer 200 in time'
        : 'the server did not print "Integration key:" in time (was the database really empty?)';
      break;
    }
    await wait(200);
  }
  if (failure) {
    await stop();
    throw new Error(`${failure}\n${tail()}`);
  }
  // Give a slow stdout write of the demo block a moment, then start counting later lines.
  await wait(100);
  output.markReady();
  return {
    pid: child.pid!,
    baseUrl,
    key,
    linesSinceReady: () => ({ count: output.readyLines, sample: output.readySample }),
    stop,
  };
}

// ---------------------------------------------------------------------------------------------
// CPU accounting from /proc: per process (grouped by name) and for the whole machine.

type ProcEntry = { comm: string; ticks: number; kernel: boolean };
type ProcTicks = Map<number, ProcEntry>;

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

function sampleProcesses(): ProcTicks | null {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  const sample: ProcTicks = new Map();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const open = stat.indexOf('(');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(open + 1, close);
      // Fields after "(comm)": state is field 3, ppid field 4, utime field 14, stime field 15.
      const rest = stat.slice(close + 2).split(' ');
      const ticks = Number(rest[11]) + Number(rest[12]);
      const kernel = entry === '2' || rest[1] === '2';
      if (Number.isFinite(ticks)) sample.set(Number(entry), { comm, ticks, kernel });
    } catch {
      // The process ended between readdir and read.
    }
  }
  return sample;
}

/** The CPU time (user and system) a process has used so far, in ms; null without /proc. */
export function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(rest[11]) + Number(rest[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / ticksPerSecond() : null;
  } catch {
    return null;
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 120);
  } catch {
    return '(gone)';
  }
}

type MachineTimes = { processes: number; interrupts: number; steal: number; idle: number; total: number };

/** Whole-machine CPU time by kind, from /proc/stat (os.cpus() when it is missing). Any unit. */
function machineTimes(): MachineTimes {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user)
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const processes = user + nice + system;
    return {
      processes,
      interrupts: irq + softirq,
      steal,
      idle: idle + iowait,
      total: processes + irq + softirq + steal + idle + iowait,
    };
  } catch {
    let processes = 0;
    let interrupts = 0;
    let idle = 0;
    for (const cpu of os.cpus()) {
      processes += cpu.times.user + cpu.times.nice + cpu.times.sys;
      interrupts += cpu.times.irq;
      idle += cpu.times.idle;
    }
    return { processes, interrupts, steal: 0, idle, total: processes + interrupts + idle };
  }
}

export type CpuReport = {
  /** % of one core, per process name (named pids take their label), highest first. */
  byProcess: { name: string; pct: number }[];
  /** % of the whole machine (all cores) that was busy: processes plus interrupts. */
  machineBusyPct: number;
  /** % of one core spent in interrupts (loopback networking, mostly) and stolen by the hypervisor. */
  interruptsPct: number;
  stealPct: number;
  /**
   * % of one core used by processes that are not part of the measurement (not the labelled pids,
   * not PostgreSQL or Redis, not kernel threads), including ones that exited during the run (seen
   * as machine busy time nobody measured accounts for): other work sharing the machine. Null
   * without /proc.
   */
  foreignPct: number | null;
  /** The busiest foreign process, if any: "pid command line". */
  foreignTop: string | undefined;
};

/** Processes that are part of what is measured, besides the labelled pids. */
const MEASURED_COMMS = new Set(['postgres', 'redis-server']);

function psCpu(pid: number): number | null {
  try {
    const value = Number(execFileSync('ps', ['-o', '%cpu=', '-p', String(pid)], { encoding: 'utf8' }).trim());
    return Number.isFinite(value) ? value : null;
  } catch {
    return null;
  }
}

export function watchCpu(labels: Map<number, string>): { stop(): CpuReport } {
  const started = process.hrtime.bigint();
  const before = sampleProcesses();
  const machineBefore = machineTimes();
  return {
    stop(): CpuReport {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const after = sampleProcesses();
      const machineAfter = machineTimes();
      const share = (kind: keyof MachineTimes) => {
        const total = machineAfter.total - machineBefore.total;
        return total > 0 ? (machineAfter[kind] - machineBefore[kind]) / total : 0;
      };
      const cores = os.cpus().length;
      const machineBusyPct = 100 * (share('processes') + share('interrupts'));
      const interruptsPct = 100 * cores * share('interrupts');
      const stealPct = 100 * cores * share('steal');
      const toPct = (ticks: number) => (100 * ticks) / ticksPerSecond() / seconds;
      const grouped = new Map<string, number>();
      let foreignPct: number | null = null;
      let foreignTop: string | undefined;
      if (before && after) {
        let foreignTicks = 0;
        let ownTicks = 0;
        let topTicks = 0;
        for (const [pid, now] of after) {
          const then = before.get(pid);
          const delta = then && then.comm === now.comm ? now.ticks - then.ticks : now.ticks;
          if (delta <= 0) continue;
          const label = labels.get(pid);
          const name = label ?? now.comm;
          grouped.set(name, (grouped.get(name) ?? 0) + delta);
          if (label || now.kernel || MEASURED_COMMS.has(now.comm)) {
            ownTicks += delta;
            continue;
          }
          foreignTicks += delta;
          if (delta > topTicks) {
            topTicks = delta;
            foreignTop = `${pid} ${commandLine(pid)} (${fmt(toPct(delta))}%)`;
          }
        }
        // Processes that ended during the run (a test runner's workers, say) are missing from the
        // second sample; the machine's process time minus what the measured processes used
        // catches them.
        const unexplained = 100 * cores * share('processes') - toPct(ownTicks);
        foreignPct = Math.max(toPct(foreignTicks), unexplained, 0);
        if (unexplained > toPct(foreignTicks) + FOREIGN_CPU_LIMIT / 2) {
          foreignTop = `mostly processes that exited during the run${foreignTop ? `; live: ${foreignTop}` : ''}`;
        }
      } else {
        // No /proc: fall back to ps for the labelled processes (a lifetime average, less precise).
        for (const [pid, name] of labels) {
          const pct = psCpu(pid);
          if (pct !== null) grouped.set(name, (pct / 100) * seconds * ticksPerSecond());
        }
      }
      const byProcess = [...grouped]
        .map(([name, ticks]) => ({ name, pct: toPct(ticks) }))
        .sort((a, b) => b.pct - a.pct);
      return { byProcess, machineBusyPct, interruptsPct, stealPct, foreignPct, foreignTop };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Load generation.

export type Measurement = {
  rps: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Non-2xx responses by status code, measured run only. */
  statusCodes: Record<string, number>;
  warmupNon2xx: number;
  warmupErrors: number;
  cpu: CpuReport;
  /** Time spent waiting for other processes on the machine to go quiet before the warm-up. */
  waitedForQuietMs: number;
  /** Measured runs thrown away because other processes were busy during them. */
  discarded: { rps: number; foreignPct: number; foreignTop: string | undefined }[];
};

/**
 * The summary row of one measured load: timeouts count as errors; the server's CPU is left out
 * when the load did not go through the server (a direct database run).
 */
export function measuredRow(
  where: { bench: string; config: string; route: string },
  m: Measurement,
  withServer = true,
): ResultRow {
  const serverCpu = m.cpu.byProcess.find((entry) => entry.name === 'server')?.pct ?? null;
  return {
    ...where,
    rps: m.rps,
    p50: m.p50,
    p99: m.p99,
    non2xx: m.non2xx,
    errors: m.errors + m.timeouts,
    serverCpu: withServer ? serverCpu : null,
    otherCpu: m.cpu.foreignPct,
  };
}

export function non2xxCodes(result: autocannon.Result): Record<string, number> {
  const codes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) {
    if (!code.startsWith('2') && stat?.count) codes[code] = stat.count;
  }
  return codes;
}

/** Foreign CPU (% of one core) above which a measured run is considered contaminated. */
export const FOREIGN_CPU_LIMIT = 20;

/**
 * Between runs the measured processes are idle, so machine activity is other work. Waits (at
 * most maxMs) until a one-second sample shows less than FOREIGN_CPU_LIMIT / 2 of a core busy.
 * Returns the time waited.
 */
export async function waitForQuiet(maxMs: number): Promise<{ waitedMs: number; quiet: boolean }> {
  const started = Date.now();
  const cores = os.cpus().length;
  for (;;) {
    const before = machineTimes();
    await wait(1000);
    const after = machineTimes();
    const total = after.total - before.total;
    const busy = after.processes - before.processes + after.interrupts - before.interrupts;
    const busyCorePct = total > 0 ? (100 * cores * busy) / total : 0;
    const waitedMs = Date.now() - started;
    if (busyCorePct < FOREIGN_CPU_LIMIT / 2) return { waitedMs, quiet: true };
    if (waitedMs >= maxMs) return { waitedMs, quiet: false };
  }
}

/**
 * Waits for the machine to go quiet (bounded), runs a discarded warm-up, then a measured run
 * with CPU accounting around it. When other
 * processes on the machine used more than FOREIGN_CPU_LIMIT of a core during the measured run,
 * it is repeated (at most `retries` times, default 1) and the cleanest attempt is reported.
 */
export async function measure(options: {
  url: string;
  headers?: Record<string, string>;
  settings: BenchSettings;
  serverPid: number;
  /** Extra measured runs allowed when one was contaminated by other processes; default 1. */
  retries?: number;
  /** Longest wait for the machine to go quiet before the warm-up; default 10 s. */
  quietWaitMs?: number;
}): Promise<Measurement> {
  const { settings } = options;
  const base = {
    url: options.url,
    headers: options.headers ?? {},
    connections: settings.connections,
    pipelining: settings.pipelining,
  };
  const { waitedMs } = await waitForQuiet(options.quietWaitMs ?? 10_000);
  let warmupNon2xx = 0;
  let warmupErrors = 0;
  if (settings.warmupSeconds > 0) {
    const warmup = await autocannon({ ...base, duration: settings.warmupSeconds });
    warmupNon2xx = warmup.non2xx;
    warmupErrors = warmup.errors;
  }
  const labels = new Map([
    [options.serverPid, 'server'],
    [process.pid, 'bench (autocannon)'],
  ]);
  // Every attempt is kept; the one with the least foreign CPU is reported, the others listed.
  const attempts: { result: autocannon.Result; cpu: CpuReport }[] = [];
  const retries = options.retries ?? 1;
  for (let attempt = 0; attempt <= retries; attempt++) {
    const cpu = watchCpu(labels);
    const result = await autocannon({ ...base, duration: settings.durationSeconds });
    attempts.push({ result, cpu: cpu.stop() });
    if ((attempts.at(-1)!.cpu.foreignPct ?? 0) <= FOREIGN_CPU_LIMIT) break;
  }
  const best = attempts.reduce((a, b) => ((b.cpu.foreignPct ?? 0) < (a.cpu.foreignPct ?? 0) ? b : a));
  const { result } = best;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: non2xxCodes(result),
    warmupNon2xx,
    warmupErrors,
    waitedForQuietMs: waitedMs,
    cpu: best.cpu,
    discarded: attempts
      .filter((attempt) => attempt !== best)
      .map((attempt) => ({
        rps: attempt.result.requests.average,
        foreignPct: attempt.cpu.foreignPct ?? 0,
        foreignTop: attempt.cpu.foreignTop,
      })),
  };
}

// ---------------------------------------------------------------------------------------------
// Printing.

export function fmt(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Renders rows as an aligned text table; columns whose header starts with '>' align right. */
export function table(headers: string[], rows: string[][]): string {
  const right = headers.map((header) => header.startsWith('>'));
  const names = headers.map((header) => header.replace(/^>/, ''));
  const widths = names.map((name, column) =>
    Math.max(name.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (right[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(names), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

export function describeCpu(report: CpuReport, top = 4): string {
  const parts = report.byProcess
    .filter(({ pct }) => pct >= 1)
    .slice(0, top)
    .map(({ name, pct }) => `${name} ${fmt(pct)}%`);
  const steal = report.stealPct >= 1 ? `, ${fmt(report.stealPct)}% stolen` : '';
  return (
    `${parts.join(', ')}, interrupts ${fmt(report.interruptsPct)}%${steal}; ` +
    `machine ${fmt(report.machineBusyPct)}% busy of ${os.cpus().length} cores`
  );
}

export type Posted = { status: number; json: Record<string, unknown>; ms: number };

/** One authenticated JSON POST, timed from send to the parsed answer. */
export async function postJson(baseUrl: string, key: string, path: string, body: unknown): Promise<Posted> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, unknown>;
  return { status: response.status, json, ms: performance.now() - started };
}

/** The p-th percentile of an ascending list (nearest rank); 0 for an empty list. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The median, p90 and p99 of latencies taken one call at a time (ms). */
export function latencySummary(values: readonly number[]): { p50: number; p90: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99) };
}

/** A report row for latencies taken one call at a time: no load generator, no CPU columns. */
export function latencyRow(
  bench: string,
  route: string,
  values: { p50: number; p99: number },
  rps = 0,
): ResultRow {
  const { p50, p99 } = values;
  return {
    bench,
    config: 'postgres',
    route,
    rps,
    p50,
    p99,
    non2xx: 0,
    errors: 0,
    serverCpu: null,
    otherCpu: null,
  };
}

/**
 * The warnings every measured run prints under its figures: waiting for quiet, discarded runs,
 * a contaminated run, refused answers or errors (the figure is then wrong), warm-up trouble, and
 * server log lines.
 */
export function logRunWarnings(
  ctx: BenchContext,
  m: Measurement,
  label: string,
  unit: string,
  server?: ServerHandle,
): void {
  if (m.waitedForQuietMs > 1500) {
    ctx.log(`      (waited ${fmt(m.waitedForQuietMs / 1000, 1)} s for other processes to go quiet first)`);
  }
  for (const attempt of m.discarded) {
    ctx.log(
      `      ! discarded a run at ${fmt(attempt.rps)} ${unit}: other processes used ${fmt(attempt.foreignPct)}% ` +
        `of a core (busiest: ${attempt.foreignTop ?? '?'})`,
    );
  }
  if ((m.cpu.foreignPct ?? 0) > FOREIGN_CPU_LIMIT) {
    ctx.log(
      `      !!! the machine was shared: other processes used ${fmt(m.cpu.foreignPct ?? 0)}% of a core ` +
        `(busiest: ${m.cpu.foreignTop ?? '?'}); this figure is contaminated`,
    );
  }
  if (m.non2xx > 0 || m.errors > 0 || m.timeouts > 0) {
    const codes = Object.entries(m.statusCodes)
      .map(([code, count]) => `${code}: ${fmt(count)}`)
      .join(', ');
    ctx.log(
      `      !!!!!!!!!! MEASUREMENT IS WRONG: ${fmt(m.non2xx)} refused/non-2xx (${codes || 'no breakdown'}), `,
    );
    ctx.log(`      !!!!!!!!!! ${fmt(m.errors)} errors, ${fmt(m.timeouts)} timeouts on ${label}`);
  }
  if (m.warmupNon2xx > 0 || m.warmupErrors > 0) {
    ctx.log(`      !!! warm-up saw ${fmt(m.warmupNon2xx)} refused/non-2xx and ${fmt(m.warmupErrors)} errors`);
  }
  const lines = server?.linesSinceReady();
  if (lines && lines.count > 0) {
    ctx.log(`      ! the server wrote ${fmt(lines.count)} log line(s) so far; first: ${lines.sample[0]}`);
  }
}

/**
 * Runs `measure` against a server on a fresh PostgreSQL database (demo key, rate limit lifted),
 * then stops the server and drops the database whatever happened. Skips without PostgreSQL.
 */
export async function withFreshServer(
  ctx: BenchContext,
  bench: string,
  database: string,
  measure: (
    server: ServerHandle & { key: string },
    databaseUrl: string,
    report: BenchReport,
  ) => Promise<void>,
  env: Record<string, string> = {},
): Promise<BenchReport> {
  const report = emptyReport();
  if (!ctx.facts.pg.ok) {
    report.skipped.push(`${bench}: PostgreSQL not reachable at ${ctx.facts.pgAdminUrl}`);
    return report;
  }
  const databaseUrl = await freshDatabase(ctx.facts.pgAdminUrl, database);
  const server = await startServer({
    databaseUrl,
    expectKey: true,
    env: { RATE_LIMIT_PER_MINUTE: '10000000', ...env },
  });
  try {
    await measure({ ...server, key: server.key! }, databaseUrl, report);
  } catch (error) {
    report.failures.push(`${bench}: ${errorText(error)}`);
  } finally {
    await server.stop();
    await dropDatabase(ctx.facts.pgAdminUrl, database).catch(() => {});
  }
  return report;
}
