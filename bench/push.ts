// Push batches (issue 7): the latency of a 500-row batch through HTTP on PostgreSQL, one at a
// time, and the rows per second several pushers sustain. Target: p50 ≤ 50 ms per batch.

import pg from 'pg';
import {
  type BenchContext,
  type BenchReport,
  dropDatabase,
  emptyReport,
  errorText,
  fmt,
  freshDatabase,
  startServer,
} from './lib.ts';

const BENCH = 'push';
const DATABASE = 'tollbook_bench_push';
const ROWS = 500;
const SEQUENTIAL_BATCHES = 30;
const PUSHERS = 4;

let nextId = 0;
function batch(): { rows: Record<string, string>[] } {
  return {
    rows: Array.from({ length: ROWS }, (_, index) => ({
      external_id: `bench-${process.pid}-${nextId++}`,
      account_key: `bank-${index % 5}`,
      currency: 'EUR',
      occurred_on: '2026-10-15',
      amount: index % 3 === 0 ? '-12.34' : '56.78',
      payee: 'Bench payee',
      note: 'bench row',
    })),
  };
}

async function pushOnce(baseUrl: string, key: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}/integration/transactions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(batch()),
  });
  const body = (await response.json()) as { booked?: number };
  if (response.status !== 200 || body.booked !== ROWS) {
    throw new Error(`push answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
  }
  return performance.now() - started;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function sustained(
  baseUrl: string,
  key: string,
  seconds: number,
): Promise<{ rowsPerSecond: number; batches: number }> {
  const deadline = performance.now() + seconds * 1000;
  let batches = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: PUSHERS }, async () => {
      while (performance.now() < deadline) {
        await pushOnce(baseUrl, key);
        batches += 1;
      }
    }),
  );
  return { rowsPerSecond: (batches * ROWS) / ((performance.now() - started) / 1000), batches };
}

export async function benchPush(ctx: BenchContext): Promise<BenchReport> {
  const report = emptyReport();
  const { facts } = ctx;
  if (!facts.pg.ok) {
    report.skipped.push(`${BENCH}: PostgreSQL not reachable at ${facts.pgAdminUrl}`);
    return report;
  }
  const databaseUrl = await freshDatabase(facts.pgAdminUrl, DATABASE);
  const server = await startServer({
    databaseUrl,
    expectKey: true,
    env: { RATE_LIMIT_PER_MINUTE: '10000000' },
  });
  try {
    // The demo space's plan allows 100,000 synced rows a month; the bench needs more.
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`UPDATE spaces SET plan = 'enterprise'`);
    await client.end();
    const key = server.key!;
    for (let warm = 0; warm < 5; warm++) await pushOnce(server.baseUrl, key);
    const latencies: number[] = [];
    for (let index = 0; index < SEQUENTIAL_BATCHES; index++)
      latencies.push(await pushOnce(server.baseUrl, key));
    latencies.sort((a, b) => a - b);
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    const load = await sustained(server.baseUrl, key, ctx.settings.durationSeconds);
    ctx.log(
      `  500-row batch, one at a time: p50 ${fmt(p50, 1)} ms, p99 ${fmt(p99, 1)} ms (${SEQUENTIAL_BATCHES} batches)`,
    );
    ctx.log(`  sustained, ${PUSHERS} pushers: ${fmt(load.rowsPerSecond)} rows/s (${load.batches} batches)`);
    report.rows.push(
      {
        bench: BENCH,
        config: 'postgres',
        route: 'POST /integration/transactions (500 rows, sequential)',
        rps: 1000 / p50,
        p50,
        p99,
        non2xx: 0,
        errors: 0,
        serverCpu: null,
        otherCpu: null,
      },
      {
        bench: BENCH,
        config: 'postgres',
        route: `rows/s sustained (${PUSHERS} pushers)`,
        rps: load.rowsPerSecond,
        p50: 0,
        p99: 0,
        non2xx: 0,
        errors: 0,
        serverCpu: null,
        otherCpu: null,
      },
    );
    report.targets.push({
      bench: BENCH,
      config: 'postgres',
      what: 'p50 of a 500-row batch (ms, at most)',
      value: p50,
      target: 50,
      pass: p50 <= 50,
      contaminated: false,
    });
  } catch (error) {
    report.failures.push(`${BENCH}: ${errorText(error)}`);
  } finally {
    await server.stop();
    await dropDatabase(facts.pgAdminUrl, DATABASE).catch(() => {});
  }
  return report;
}
