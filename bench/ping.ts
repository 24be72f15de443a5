// Foundation benchmark: cost of authentication + rate limiting, measured as the throughput of an
// authenticated `GET /integration/ping` relative to the empty, unauthenticated `GET /livez` on
// the same server. Two configurations: PostgreSQL alone, and PostgreSQL plus Redis.

import {
  type BenchContext,
  type BenchReport,
  describeCpu,
  dropDatabase,
  emptyReport,
  errorText,
  FOREIGN_CPU_LIMIT,
  fmt,
  freshDatabase,
  logRunWarnings,
  type Measurement,
  measure,
  measuredRow,
  type ServerHandle,
  startServer,
} from './lib.ts';

const BENCH = 'ping';
const DATABASE = 'tollbook_bench';
// The server's limiter admits RATE_LIMIT_PER_MINUTE calls per key per rolling minute (default 240).
// One key serves every connection here, so the limit is lifted to its maximum accepted value.
const RATE_LIMIT = '10000000';

type Config = { name: string; redis: boolean; target: number };

const CONFIGS: Config[] = [
  { name: 'postgres', redis: false, target: 0.4 },
  { name: 'postgres+redis', redis: true, target: 0.6 },
];

function describe(ctx: BenchContext, route: string, m: Measurement, server: ServerHandle): void {
  ctx.log(
    `    ${route.padEnd(18)} ${fmt(m.rps).padStart(7)} req/s   p50 ${fmt(m.p50)} ms   p99 ${fmt(m.p99)} ms   ` +
      `${fmt(m.total)} responses`,
  );
  ctx.log(`      cpu: ${describeCpu(m.cpu)}`);
  logRunWarnings(ctx, m, route, 'req/s', server);
}

/** Fails loudly unless ping really authenticates with the key and livez really answers. */
async function sanityCheck(server: ServerHandle, headers: Record<string, string>): Promise<void> {
  const ping = await fetch(`${server.baseUrl}/integration/ping`, { headers });
  const body = await ping.text();
  if (ping.status !== 200 || !body.includes('space_id')) {
    throw new Error(`GET /integration/ping with the demo key answered ${ping.status}: ${body.slice(0, 200)}`);
  }
  const limit = ping.headers.get('ratelimit-limit');
  if (limit !== RATE_LIMIT) {
    throw new Error(
      `ratelimit-limit is ${limit}, not ${RATE_LIMIT}: the server ignores RATE_LIMIT_PER_MINUTE, ` +
        'so the load run would measure 429 refusals',
    );
  }
  const unauthenticated = await fetch(`${server.baseUrl}/integration/ping`);
  await unauthenticated.arrayBuffer();
  if (unauthenticated.status !== 401) {
    throw new Error(`GET /integration/ping without a key answered ${unauthenticated.status}, not 401`);
  }
  const livez = await fetch(`${server.baseUrl}/livez`);
  await livez.arrayBuffer();
  if (livez.status !== 200) throw new Error(`GET /livez answered ${livez.status}`);
}

async function runConfig(ctx: BenchContext, config: Config, report: BenchReport): Promise<void> {
  const { facts, settings } = ctx;
  ctx.log(`  [${config.name}] fresh database ${DATABASE}, starting server...`);
  const databaseUrl = await freshDatabase(facts.pgAdminUrl, DATABASE);
  let server: ServerHandle | undefined;
  try {
    server = await startServer({
      databaseUrl,
      redisUrl: config.redis ? facts.redisUrl : undefined,
      env: { RATE_LIMIT_PER_MINUTE: RATE_LIMIT },
      expectKey: true,
    });
    if (!server.key) throw new Error('no integration key was printed');
    const headers = { authorization: `Bearer ${server.key}` };
    await sanityCheck(server, headers);
    ctx.log(`  [${config.name}] server pid ${server.pid} at ${server.baseUrl}`);

    const livez = await measure({ url: `${server.baseUrl}/livez`, settings, serverPid: server.pid });
    describe(ctx, 'GET /livez', livez, server);
    const ping = await measure({
      url: `${server.baseUrl}/integration/ping`,
      headers,
      settings,
      serverPid: server.pid,
    });
    describe(ctx, 'GET /integration/ping', ping, server);

    const ratio = livez.rps > 0 ? ping.rps / livez.rps : 0;
    const pass = ratio >= config.target;
    const contaminated = [livez, ping].some((m) => (m.cpu.foreignPct ?? 0) > FOREIGN_CPU_LIMIT);
    ctx.log(
      `    ratio ping/livez = ${fmt(ratio, 3)}   target >= ${config.target}   ${pass ? 'PASS' : 'FAIL'}` +
        (ping.non2xx + livez.non2xx > 0 ? '   (INVALID: non-2xx responses were counted)' : '') +
        (contaminated ? '   (contaminated: other processes were busy, see above)' : ''),
    );
    for (const [route, m] of [
      ['GET /livez', livez],
      ['GET /integration/ping', ping],
    ] as const) {
      report.rows.push(measuredRow({ bench: BENCH, config: config.name, route }, m));
    }
    report.targets.push({
      bench: BENCH,
      config: config.name,
      what: 'ping/livez req/s',
      value: ratio,
      target: config.target,
      pass,
      contaminated,
    });
  } finally {
    await server?.stop();
    await dropDatabase(facts.pgAdminUrl, DATABASE).catch((error) => {
      ctx.log(`  [${config.name}] could not drop ${DATABASE}: ${errorText(error)}`);
    });
  }
}

export async function benchPing(ctx: BenchContext): Promise<BenchReport> {
  const report = emptyReport();
  for (const config of CONFIGS) {
    if (!ctx.facts.pg.ok) {
      const why = `PostgreSQL not reachable at ${ctx.facts.pgAdminUrl} (${ctx.facts.pg.reason})`;
      report.skipped.push(`${BENCH} [${config.name}]: ${why}`);
      ctx.log(`  [${config.name}] skipped: ${why}`);
      continue;
    }
    if (config.redis && !ctx.facts.redis.ok) {
      const why = `Redis not reachable at ${ctx.facts.redisUrl} (${ctx.facts.redis.reason})`;
      report.skipped.push(`${BENCH} [${config.name}]: ${why}`);
      ctx.log(`  [${config.name}] skipped: ${why}`);
      continue;
    }
    try {
      await runConfig(ctx, config, report);
    } catch (error) {
      const message = errorText(error);
      report.failures.push(`${BENCH} [${config.name}]: ${message}`);
      ctx.log(`  [${config.name}] FAILED: ${message}`);
    }
  }
  return report;
}
