// Push batches (issue 7): the latency of a 500-row batch through HTTP on PostgreSQL, one at a
// time, and the rows per second several pushers sustain. Target: p50 ≤ 50 ms per batch.

import pg from 'pg';
import { type BenchContext, type BenchReport, fmt, percentile, postJson, withFreshServer } from './lib.ts';

const BENCH = 'push';
const ROWS = 500;
const SEQUENTIAL_BATCHES = 60;
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
  const answer = await postJson(baseUrl, key, '/integration/transactions', batch());
  if (answer.status !== 200 || answer.json.booked !== ROWS) {
    throw new Error(`push answered ${answer.status}: ${JSON.stringify(answer.json).slice(0, 300)}`);
  }
  return answer.ms;
}

async function sustained(baseUrl: string, key: string, seconds: number) {
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

export function benchPush(ctx: BenchContext): Promise<BenchReport> {
  return withFreshServer(ctx, BENCH, 'tollbook_bench_push', async (server, databaseUrl, report) => {
    // The demo space's plan allows 100,000 synced rows a month; the bench needs more.
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`UPDATE spaces SET plan = 'enterprise'`);
    await client.end();
    for (let warm = 0; warm < 5; warm++) await pushOnce(server.baseUrl, server.key);
    const latencies: number[] = [];
    for (let index = 0; index < SEQUENTIAL_BATCHES; index++)
      latencies.push(await pushOnce(server.baseUrl, server.key));
    latencies.sort((a, b) => a - b);
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    const load = await sustained(server.baseUrl, server.key, ctx.settings.durationSeconds);
    ctx.log(
      `  500-row batch, one at a time: p50 ${fmt(p50, 1)} ms, p99 ${fmt(p99, 1)} ms (${SEQUENTIAL_BATCHES} batches)`,
    );
    ctx.log(`  sustained, ${PUSHERS} pushers: ${fmt(load.rowsPerSecond)} rows/s (${load.batches} batches)`);
    const row = { bench: BENCH, config: 'postgres', non2xx: 0, errors: 0, serverCpu: null, otherCpu: null };
    report.rows.push(
      { ...row, route: 'POST /integration/transactions (500 rows, sequential)', rps: 1000 / p50, p50, p99 },
      { ...row, route: `rows/s sustained (${PUSHERS} pushers)`, rps: load.rowsPerSecond, p50: 0, p99: 0 },
    );
    report.targets.push({
      bench: BENCH,
      config: 'postgres',
      what: 'p50 of a 500-row batch (ms, at most)',
      value: p50,
      target: 50,
      pass: p50 <= 50,
      contaminated: false,
      atMost: true,
    });
  });
}
