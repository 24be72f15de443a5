import type { IncomingMessage, ServerResponse } from 'node:http';
import { sql } from 'kysely';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Clock } from '../core/clock.ts';
import { chainUnknownTotal } from './chain/outcome.ts';
import type { Db } from './db/database.ts';

// What operators scrape: the process, HTTP latency per route, the outbox backlog, webhook
// delivery outcomes, how far behind the chain watch is and the gas wallet's balance. The
// database figures are read at scrape time (a few indexed counts); the gas balance costs an RPC
// call, so a timer reads it and a scrape only reports the last reading: scraping never spends
// the operator's RPC quota.

export const GAS_SAMPLE_INTERVAL_MS = 60_000;
const HTTP_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export type GasReading = { caip2: string; address: string; wei: bigint; low: boolean };

export type Metrics = {
  registry: Registry;
  /** Counts one answered request (route is the pattern, never the raw URL). */
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void;
  /** Records a gas reading taken by the sampler. */
  recordGas(readings: GasReading[], at: Date): void;
};

/**
 * A figure a feature reads at scrape time (platform imports no feature: app.ts and main.ts pass
 * these in). A reading that fails fails the scrape, as the platform's own gauges do.
 */
export type ScrapeGauge = { name: string; help: string; read: () => Promise<number> };

export type MetricsDeps = { db: Db; clock: Clock; gauges?: ScrapeGauge[] };

/** Figures read from the database at scrape time: a few indexed counts, no chain calls. */
function registerDatabaseGauges(registry: Registry, deps: MetricsDeps): void {
  for (const gauge of deps.gauges ?? []) {
    new Gauge({
      name: gauge.name,
      help: gauge.help,
      registers: [registry],
      async collect() {
        this.set(await gauge.read());
      },
    });
  }
  new Gauge({
    name: 'tollbook_outbox_backlog',
    help: 'Outbox events written but not yet fanned out to webhooks and mail.',
    registers: [registry],
    async collect() {
      const row = await deps.db
        .selectFrom('outbox_events')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where('dispatched_at', 'is', null)
        .executeTakeFirst();
      this.set(Number(row?.count ?? 0));
    },
  });
  new Gauge({
    name: 'tollbook_webhook_deliveries',
    help: 'Webhook deliveries per status: pending, held, delivered, given_up.',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const rows = await deps.db
        .selectFrom('webhook_deliveries')
        .select(['status', (eb) => eb.fn.countAll<string>().as('count')])
        .groupBy('status')
        .execute();
      this.reset();
      for (const status of ['pending', 'held', 'delivered', 'given_up']) this.set({ status }, 0);
      for (const row of rows) this.set({ status: row.status }, Number(row.count));
    },
  });
  new Gauge({
    name: 'tollbook_chain_watch_lag_seconds',
    help: 'Seconds since the chain watch last moved its cursor, per network key.',
    labelNames: ['network'],
    registers: [registry],
    async collect() {
      const rows = await sql<{ network: string; updated_at: Date }>`
        SELECT network, updated_at FROM chain_cursors`.execute(deps.db);
      this.reset();
      const now = deps.clock.now().getTime();
      for (const row of rows.rows) {
        this.set({ network: row.network }, Math.max(0, (now - new Date(row.updated_at).getTime()) / 1000));
      }
    },
  });
}

export function createMetrics(deps: MetricsDeps): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'tollbook_' });
  registry.registerMetric(chainUnknownTotal);
  const http = new Histogram({
    name: 'tollbook_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer being sent, per route pattern.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: HTTP_BUCKETS_SECONDS,
    registers: [registry],
  });
  registerDatabaseGauges(registry, deps);
  const gasWei = new Gauge({
    name: 'tollbook_gas_wallet_balance_wei',
    help: 'Native balance of each gas wallet lane that pays for settlements (read on a timer).',
    labelNames: ['network', 'address'],
    registers: [registry],
  });
  const gasLow = new Gauge({
    name: 'tollbook_gas_wallet_low',
    help: 'Whether a gas wallet lane is below the warning threshold GAS_LOW_WEI (1) or not (0).',
    labelNames: ['network', 'address'],
    registers: [registry],
  });
  const gasReadAt = new Gauge({
    name: 'tollbook_gas_wallet_read_timestamp_seconds',
    help: 'When the gas balance was last read.',
    registers: [registry],
  });
  const gasReads = new Counter({
    name: 'tollbook_gas_wallet_reads_total',
    help: 'Gas balance readings taken by the timer.',
    registers: [registry],
  });
  return {
    registry,
    observeRequest(method, route, statusCode, seconds) {
      http.observe({ method, route, status_code: String(statusCode) }, seconds);
    },
    recordGas(readings, at) {
      gasReads.inc();
      gasReadAt.set(at.getTime() / 1000);
      for (const reading of readings) {
        // Prometheus samples are floats: about 15 significant digits of the wei, ample for a warning.
        const labels = { network: reading.caip2, address: reading.address.toLowerCase() };
        gasWei.set(labels, Number(reading.wei));
        gasLow.set(labels, reading.low ? 1 : 0);
      }
    },
  };
}

/**
 * Reads the gas balance now and then every `intervalMs`, until the returned stop is called.
 * A failed reading is logged by the caller and leaves the last good one in place.
 */
export function startGasSampler(
  metrics: Metrics,
  read: () => Promise<GasReading[]>,
  options: { clock: Clock; intervalMs?: number; onError?: (error: unknown) => void },
): () => void {
  const sample = () =>
    read().then(
      (readings) => metrics.recordGas(readings, options.clock.now()),
      (error) => options.onError?.(error),
    );
  void sample();
  const timer = setInterval(sample, options.intervalMs ?? GAS_SAMPLE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * The request handler of the loopback metrics server (METRICS_PORT; main.ts listens): /metrics
 * without a token, since only this machine can reach it; anything else is 404.
 */
export function metricsRequestHandler(metrics: Metrics) {
  return (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      () => response.writeHead(500, { 'content-type': 'text/plain' }).end('Metrics could not be read\n'),
    );
  };
}
