// `npm run bench`: prints the machine facts, runs every benchmark in turn, then a compact table.
// A benchmark is a measurement, not a test: missed targets still exit 0. The exit code is 1 only
// when a measurement could not be taken (server failed to start, wrong answers...).
// Add a benchmark: write bench/<name>.ts exporting an async BenchFn and list it below.

import { benchAgents } from './agents.ts';
import { benchApp } from './app.ts';
import { benchCharges } from './charges.ts';
import { benchInvoices } from './invoices.ts';
import {
  type BenchContext,
  type BenchFn,
  type BenchReport,
  emptyReport,
  errorText,
  FOREIGN_CPU_LIMIT,
  fmt,
  gatherFacts,
  killAllChildren,
  readSettings,
  table,
} from './lib.ts';
import { benchParse } from './parse.ts';
import { benchPayouts } from './payouts.ts';
import { benchPing } from './ping.ts';
import { benchPush } from './push.ts';
import { benchScale } from './scale.ts';
import { benchScreening } from './screening.ts';
import { benchWebhooks } from './webhooks.ts';
import { benchX402 } from './x402.ts';

const BENCHMARKS: { name: string; run: BenchFn }[] = [
  { name: 'ping', run: benchPing },
  { name: 'charges', run: benchCharges },
  { name: 'webhooks', run: benchWebhooks },
  { name: 'push', run: benchPush },
  { name: 'invoices', run: benchInvoices },
  { name: 'x402', run: benchX402 },
  { name: 'payouts', run: benchPayouts },
  { name: 'parse', run: benchParse },
  { name: 'app', run: benchApp },
  { name: 'agents', run: benchAgents },
  { name: 'scale', run: benchScale },
  { name: 'screening', run: benchScreening },
];

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killAllChildren();
    process.exit(130);
  });
}

const log = (line = '') => process.stdout.write(`${line}\n`);

async function main(): Promise<number> {
  const started = Date.now();
  // `npm run bench -- charges` runs only the named benchmarks; no names runs them all.
  const names = process.argv.slice(2);
  const unknown = names.filter((name) => !BENCHMARKS.some((bench) => bench.name === name));
  if (unknown.length > 0) {
    log(
      `Unknown benchmark(s): ${unknown.join(', ')}; known: ${BENCHMARKS.map((bench) => bench.name).join(', ')}`,
    );
    return 1;
  }
  const settings = readSettings();
  const facts = await gatherFacts();
  log('Tollbook benchmarks');
  log(`  node ${facts.node}, ${facts.cpus} CPU(s) (${facts.cpuModel})`);
  log(
    facts.pg.ok
      ? `  PostgreSQL ${facts.pg.version} at ${facts.pgAdminUrl}`
      : `  PostgreSQL NOT reachable at ${facts.pgAdminUrl}: ${facts.pg.reason}`,
  );
  log(
    facts.redis.ok
      ? `  Redis ${facts.redis.version} at ${facts.redisUrl}: PING answered PONG`
      : `  Redis NOT reachable at ${facts.redisUrl}: ${facts.redis.reason}`,
  );
  log(
    `  load: autocannon, ${settings.connections} connections, pipelining ${settings.pipelining}, ` +
      `${settings.warmupSeconds}s warm-up (discarded) + ${settings.durationSeconds}s measured per route, ` +
      'in this process; the server runs in its own process',
  );
  log(
    `  shared machine: before each route, waits up to 10 s for other processes to go quiet; a measured run ` +
      `during which they used more than ${FOREIGN_CPU_LIMIT}% of a core is repeated once and the cleaner kept`,
  );

  const ctx: BenchContext = { facts, settings, log };
  const reports: BenchReport[] = [];
  for (const bench of BENCHMARKS.filter((each) => names.length === 0 || names.includes(each.name))) {
    log();
    log(`== ${bench.name}`);
    try {
      reports.push(await bench.run(ctx));
    } catch (error) {
      const report = emptyReport();
      report.failures.push(`${bench.name}: ${errorText(error)}`);
      log(`  FAILED: ${errorText(error)}`);
      reports.push(report);
    }
  }

  const rows = reports.flatMap((report) => report.rows);
  const targets = reports.flatMap((report) => report.targets);
  const skipped = reports.flatMap((report) => report.skipped);
  const failures = reports.flatMap((report) => report.failures);

  log();
  log('== Summary');
  if (rows.length > 0) {
    log(
      table(
        [
          'bench',
          'config',
          'route',
          '>req/s',
          '>p50 ms',
          '>p99 ms',
          '>non-2xx',
          '>errors',
          '>server cpu',
          '>srv µs/req',
          '>other cpu',
        ],
        rows.map((row) => [
          row.bench,
          row.config,
          row.route,
          fmt(row.rps),
          fmt(row.p50),
          fmt(row.p99),
          row.non2xx > 0 ? `${fmt(row.non2xx)} !!!` : '0',
          row.errors > 0 ? `${fmt(row.errors)} !!!` : '0',
          row.serverCpu === null ? '?' : `${fmt(row.serverCpu)}%`,
          row.serverCpu === null || row.rps <= 0 ? '?' : fmt((row.serverCpu * 1e4) / row.rps),
          row.otherCpu === null
            ? '?'
            : `${fmt(row.otherCpu)}%${row.otherCpu > FOREIGN_CPU_LIMIT ? ' !' : ''}`,
        ]),
      ),
    );
  }
  if (targets.length > 0) {
    log();
    log(
      table(
        ['bench', 'config', 'figure', '>value', '>target', 'verdict'],
        targets.map((check) => [
          check.bench,
          check.config,
          check.what,
          fmt(check.value, 3),
          `${check.atMost ? '<=' : '>='} ${check.target}`,
          `${check.pass ? 'PASS' : 'FAIL'}${check.contaminated ? ' (contaminated)' : ''}`,
        ]),
      ),
    );
  }
  const invalid = rows.filter((row) => row.non2xx > 0 || row.errors > 0);
  if (invalid.length > 0) {
    log();
    log('!!! Non-2xx responses or connection errors were counted; those figures are NOT valid:');
    for (const row of invalid) log(`!!!   ${row.bench} [${row.config}] ${row.route}`);
  }
  const shared = rows.filter((row) => (row.otherCpu ?? 0) > FOREIGN_CPU_LIMIT);
  if (shared.length > 0) {
    log();
    log(
      `! Other processes used more than ${FOREIGN_CPU_LIMIT}% of a core during ${shared.length} measured run(s) ` +
        '(marked "!"); rerun on a quiet machine for clean figures.',
    );
  }
  if (rows.length > 0) {
    log(
      'CPU columns are % of one core during the measured run; "srv µs/req" is server CPU time per response; ' +
        '"other" is unrelated processes sharing the machine.',
    );
  }
  for (const line of skipped) log(`skipped: ${line}`);
  for (const line of failures) log(`FAILED: ${line.split('\n')[0]}`);
  log();
  log(`Done in ${fmt((Date.now() - started) / 1000, 1)} s.`);
  return failures.length > 0 ? 1 : 0;
}

main().then(
  (code) => {
    killAllChildren();
    process.exitCode = code;
  },
  (error) => {
    killAllChildren();
    process.stderr.write(
      `bench crashed: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`,
    );
    process.exitCode = 1;
  },
);
