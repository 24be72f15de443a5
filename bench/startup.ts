// Start-up and memory, development (tsx over src/) against production (node dist/main.js):
// milliseconds from spawn to the first 200 from /healthz, the resident set size (RSS) once it
// answers, and the RSS after 60 seconds of POST /integration/charges (BENCH_LOAD_SECONDS).
// Both run on one PostgreSQL database (migrated by a first, unmeasured start), alternated over
// BENCH_STARTUP_ROUNDS rounds, on the database BENCH_STARTUP_DATABASE (default
// tollbook_bench_startup, dropped and created). Needs `npm run build` first. Run: `npm run bench:startup`.

import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { serverNodeFlags } from '../bin/node-flags.mjs';
import { fmt, freePort, freshDatabase, ROOT, table } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 3);
const LOAD_SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 60);
const ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const START_TIMEOUT_MS = 300_000;
// Each started as `npm start` and the container start it, with the same node flags.
const MODES = {
  tsx: [...serverNodeFlags(), '--import', 'tsx', '--import', './src/telemetry.ts', 'src/main.ts'],
  dist: [...serverNodeFlags(), '--import', './dist/telemetry.js', 'dist/main.js'],
} as const;
type Mode = keyof typeof MODES;

const masterKey = randomBytes(32).toString('hex');
const log = (line = '') => process.stdout.write(`${line}\n`);

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return kb / 1024;
}

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

type Started = { child: ChildProcess; url: string; ms: number; output: () => string };

async function start(mode: Mode, databaseUrl: string, demo: boolean): Promise<Started> {
  const port = await freePort();
  let output = '';
  const began = performance.now();
  const child = spawn(process.execPath, [...MODES[mode]], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: mode === 'dist' ? 'production' : 'development',
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: 'https://bench.example',
      DATABASE_URL: databaseUrl,
      MASTER_KEY: masterKey,
      LOG_LEVEL: 'warn',
      RUN_WORKERS: '0',
      CHAIN: mode === 'dist' ? '' : '0',
      DEMO: demo ? '1' : '0',
      RATE_LIMIT_PER_MINUTE: '10000000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const url = `http://127.0.0.1:${port}`;
  while (!(await healthy(url))) {
    if (child.exitCode !== null) throw new Error(`${mode} exited during start-up:\n${output}`);
    if (performance.now() - began > START_TIMEOUT_MS) throw new Error(`${mode}: no /healthz in time`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { child, url, ms: performance.now() - began, output: () => output };
}

async function stop(started: Started): Promise<void> {
  const exited = new Promise((resolve) => started.child.once('exit', resolve));
  started.child.kill('SIGTERM');
  await exited;
}

async function chargeLoad(url: string, key: string, accountId: string): Promise<number> {
  const result = await autocannon({
    url: `${url}/integration/charges`,
    method: 'POST',
    connections: 10,
    duration: LOAD_SECONDS,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ client_ref: 'bench-startup', account_id: accountId, amount: '0.0001' }),
  });
  return result.requests.average;
}

async function main(): Promise<void> {
  const databaseUrl = await freshDatabase(
    ADMIN_URL,
    process.env.BENCH_STARTUP_DATABASE ?? 'tollbook_bench_startup',
  );
  // The first start migrates the database and prints the demo space's key; it is not measured.
  const first = await start('tsx', databaseUrl, true);
  // The demo block prints after the server listens: wait for it (bounded).
  const printedBy = performance.now() + START_TIMEOUT_MS;
  let key: string | undefined;
  while (!key && performance.now() < printedBy) {
    key = /Integration key:\s*(oit_[A-Za-z0-9_-]+)/.exec(first.output())?.[1];
    if (!key) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (!key) throw new Error(`no demo key printed:\n${first.output()}`);
  const account = await fetch(`${first.url}/integration/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'bank', name: 'Bench bank', currency: 'USD' }),
  });
  const accountId = ((await account.json()) as { id: string }).id;
  await stop(first);

  const rows: string[][] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const mode of Object.keys(MODES) as Mode[]) {
      const started = await start(mode, databaseUrl, false);
      const startRss = rssMb(started.child.pid!);
      let loaded = ['', '', ''];
      if (round === ROUNDS) {
        const perSecond = await chargeLoad(started.url, key, accountId);
        loaded = [fmt(rssMb(started.child.pid!)), fmt(perSecond), String(LOAD_SECONDS)];
      }
      await stop(started);
      rows.push([String(round), mode, fmt(started.ms), fmt(startRss), ...loaded]);
      log(`round ${round} ${mode}: /healthz after ${fmt(started.ms)} ms, RSS ${fmt(startRss)} MB`);
    }
  }
  log();
  log(
    table(
      [
        'round',
        'server',
        'to /healthz (ms)',
        'RSS at start (MB)',
        'RSS after load (MB)',
        'charges/s',
        'load (s)',
      ],
      rows,
    ),
  );
}

await main();
