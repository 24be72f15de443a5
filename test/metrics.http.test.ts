import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/core/clock.ts';
import { loadScreeningList } from '../src/features/screening/index.ts';
import { ConfigError, loadConfig } from '../src/platform/config.ts';
import { createMetrics, metricsRequestHandler, startGasSampler } from '../src/platform/metrics.ts';
import { createHarness, type Harness } from './harness.ts';
import { holdScreeningList } from './support/turns.ts';

// /metrics: Prometheus text from prom-client, only for the bearer of METRICS_TOKEN on the public
// port, or without a token on a loopback METRICS_PORT; the gas balance is read by a timer.

// This file loads its own sanctions list (the database's current one).
holdScreeningList();

const TOKEN = 'metrics-token-0123456789abcdef';
let h: Harness;
let bare: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { METRICS_TOKEN: TOKEN } });
  bare = await createHarness();
});
afterAll(async () => {
  await h.close();
  await bare.close();
});

const scrape = (authorization?: string) =>
  h.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });

describe('GET /metrics on the public port', () => {
  it('does not exist without METRICS_TOKEN', async () => {
    expect((await bare.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
  });

  it('answers 401 without the token or with a wrong one', async () => {
    for (const authorization of [
      undefined,
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(1)}`,
      TOKEN,
      'Bearer ',
    ]) {
      const res = await scrape(authorization);
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(res.json()).toMatchObject({ error: 'unauthorized' });
      expect(res.body).not.toContain('tollbook_');
    }
  });

  it('serves process, HTTP-per-route, outbox and delivery figures to the bearer of the token', async () => {
    const space = await h.world();
    await h.inject({ method: 'GET', url: '/livez' });
    await h.inject({ method: 'GET', url: `/app/api/spaces/${space.spaceId}`, session: space.owner.token });
    const res = await scrape(`Bearer ${TOKEN}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    const text = res.body;
    expect(text).toContain('tollbook_process_cpu_seconds_total');
    expect(text).toContain('tollbook_nodejs_eventloop_lag_seconds');
    expect(text).toMatch(
      /tollbook_http_request_duration_seconds_count\{method="GET",route="\/livez",status_code="200"\} [1-9]/,
    );
    // Ids never become labels: the route pattern is the label.
    expect(text).toContain('route="/app/api/spaces/:id"');
    expect(text).not.toContain(space.spaceId);
    expect(text).toMatch(/^tollbook_outbox_backlog \d+$/m);
    expect(text).toMatch(/^tollbook_webhook_deliveries\{status="given_up"\} \d+$/m);
    expect(text).toContain('# TYPE tollbook_chain_watch_lag_seconds gauge');
  });
});

describe('the loopback metrics port', () => {
  it('serves /metrics without a token and nothing else', async () => {
    const metrics = createMetrics({ db: h.db, clock: systemClock });
    const server = createServer(metricsRequestHandler(metrics));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const ok = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('tollbook_outbox_backlog');
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'POST' })).status).toBe(404);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('is configured by METRICS_PORT, and a weak METRICS_TOKEN stops start-up', () => {
    expect(loadConfig({ NODE_ENV: 'test', METRICS_PORT: '9464' }).metricsPort).toBe(9464);
    expect(loadConfig({ NODE_ENV: 'test' }).metricsPort).toBeUndefined();
    expect(() => loadConfig({ NODE_ENV: 'test', METRICS_PORT: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'test', METRICS_TOKEN: 'short' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'test', METRICS_TOKEN: ` ${TOKEN}` })).toThrow(ConfigError);
  });
});

/** A gas wallet lane's address, as the gauges label it. */
const LANE = '0x14dc79964da2c08b23698b3d3cc7ca32193d9955';

describe('the gas balance', () => {
  it('is read by the timer, never by a scrape, and a scrape reports the last reading', async () => {
    const metrics = createMetrics({ db: h.db, clock: systemClock });
    let reads = 0;
    const read = async () => {
      reads++;
      return [
        { caip2: 'eip155:31337', address: LANE, wei: 5_000_000_000_000_000n + BigInt(reads), low: false },
      ];
    };
    const stop = startGasSampler(metrics, read, { clock: systemClock, intervalMs: 60_000 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 20));
      for (let scrapeIndex = 0; scrapeIndex < 5; scrapeIndex++) {
        const text = await metrics.registry.metrics();
        expect(text).toContain(
          `tollbook_gas_wallet_balance_wei{network="eip155:31337",address="${LANE}"} 5000000000000001`,
        );
        expect(text).toContain(`tollbook_gas_wallet_low{network="eip155:31337",address="${LANE}"} 0`);
      }
      expect(reads).toBe(1);
    } finally {
      stop();
    }
  });

  it('keeps the last good reading when a later one fails, and reads again on each tick', async () => {
    const metrics = createMetrics({ db: h.db, clock: systemClock });
    let reads = 0;
    const errors: unknown[] = [];
    const read = async () => {
      reads++;
      if (reads > 1) throw new Error('rpc down');
      return [{ caip2: 'eip155:8453', address: LANE, wei: 10n, low: true }];
    };
    const stop = startGasSampler(metrics, read, {
      clock: systemClock,
      intervalMs: 30,
      onError: (e) => errors.push(e),
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(reads).toBeGreaterThan(2);
      expect(errors.length).toBe(reads - 1);
      expect(await metrics.registry.metrics()).toContain(
        `tollbook_gas_wallet_low{network="eip155:8453",address="${LANE}"} 1`,
      );
    } finally {
      stop();
    }
  });
});

describe('the sanctions list gauges', () => {
  const FIXTURE = 'test/fixtures/sdn-sample.xml';

  /**
   * `tollbook screening load FIXTURE`: on PostgreSQL the real command, in a child process, into
   * the database this server reads; on the in-memory PGlite (one process only) the function the
   * command runs, on the same database.
   */
  async function screeningLoad(): Promise<number> {
    if (!process.env.DATABASE_URL) {
      const loaded = await loadScreeningList(
        { db: h.db, clock: systemClock },
        await readFile(FIXTURE, 'utf8'),
        FIXTURE,
      );
      if (!loaded.ok) throw new Error(loaded.problem);
      return loaded.entries;
    }
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['bin/tollbook.mjs', 'screening', 'load', FIXTURE],
        { env: { ...process.env, LOG_LEVEL: 'silent' } },
        (error, out, err) => (error ? reject(new Error(`${error.message}: ${err}`)) : resolve(out)),
      ),
    );
    const match = /(\d+) names and addresses to screen against/.exec(stdout);
    if (!match) throw new Error(`unexpected output: ${stdout}`);
    return Number(match[1]);
  }

  it('reports the size and publication date of the list loaded by `tollbook screening load`', async () => {
    const entries = await screeningLoad();
    expect(entries).toBeGreaterThan(0);
    const res = await scrape(`Bearer ${TOKEN}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('# TYPE tollbook_screening_list_entries gauge');
    expect(res.body).toMatch(new RegExp(`^tollbook_screening_list_entries ${entries}$`, 'm'));
    // The fixture is the list published on 2026-11-20 (Unix time at 00:00 UTC).
    expect(res.body).toContain('# TYPE tollbook_screening_list_published_seconds gauge');
    expect(res.body).toMatch(
      new RegExp(`^tollbook_screening_list_published_seconds ${Date.UTC(2026, 10, 20) / 1000}$`, 'm'),
    );
  }, 120_000);
});
