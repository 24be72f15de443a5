// Invoice mirroring (issue 6): creating an invoice with 200 lines through HTTP on PostgreSQL,
// one at a time, p50 and p99. Target: p99 under 50 ms.

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

const BENCH = 'invoices';
const DATABASE = 'tollbook_bench_invoices';
const LINES = 200;
const INVOICES = 60;

function invoiceBody(accountId: string) {
  return {
    account_id: accountId,
    client_name: 'Bench Client Ltd',
    client_email: 'billing@example.com',
    due_on: '2026-12-31',
    currency: 'EUR',
    line_items: Array.from({ length: LINES }, (_, index) => ({
      description: `Consulting block ${index + 1}`,
      unit_price: (index % 7 === 0 ? '99.995' : '12.50').toString(),
      quantity: index % 3 === 0 ? '1.5' : '2',
      tax_kind: index % 4 === 0 ? 'reduced' : 'standard',
      tax_rate: index % 4 === 0 ? '7' : '19',
    })),
  };
}

async function call(
  baseUrl: string,
  key: string,
  path: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown>; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, unknown>;
  return { status: response.status, json, ms: performance.now() - started };
}

export async function benchInvoices(ctx: BenchContext): Promise<BenchReport> {
  const report = emptyReport();
  if (!ctx.facts.pg.ok) {
    report.skipped.push(`${BENCH}: PostgreSQL not reachable at ${ctx.facts.pgAdminUrl}`);
    return report;
  }
  const databaseUrl = await freshDatabase(ctx.facts.pgAdminUrl, DATABASE);
  const server = await startServer({
    databaseUrl,
    expectKey: true,
    env: { RATE_LIMIT_PER_MINUTE: '10000000' },
  });
  try {
    const key = server.key!;
    const account = await call(server.baseUrl, key, '/integration/accounts', {
      kind: 'bank',
      name: 'Bench EUR',
      currency: 'EUR',
    });
    if (account.status !== 201)
      throw new Error(`account answered ${account.status}: ${JSON.stringify(account.json)}`);
    const accountId = String(account.json.id);
    const latencies: number[] = [];
    for (let index = 0; index < INVOICES + 5; index++) {
      const created = await call(server.baseUrl, key, '/integration/invoices', invoiceBody(accountId));
      if (created.status !== 201)
        throw new Error(`invoice answered ${created.status}: ${JSON.stringify(created.json).slice(0, 300)}`);
      if (index >= 5) latencies.push(created.ms);
    }
    latencies.sort((a, b) => a - b);
    const p50 = latencies[Math.floor(latencies.length / 2)] ?? 0;
    const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? 0;
    ctx.log(
      `  invoice with ${LINES} lines, one at a time: p50 ${fmt(p50, 1)} ms, p99 ${fmt(p99, 1)} ms (${INVOICES} invoices)`,
    );
    report.rows.push({
      bench: BENCH,
      config: 'postgres',
      route: `POST /integration/invoices (${LINES} lines)`,
      rps: 1000 / p50,
      p50,
      p99,
      non2xx: 0,
      errors: 0,
      serverCpu: null,
      otherCpu: null,
    });
    report.targets.push({
      bench: BENCH,
      config: 'postgres',
      what: 'p99 of a 200-line invoice (ms, at most)',
      value: p99,
      target: 50,
      pass: p99 < 50,
      contaminated: false,
      atMost: true,
    });
  } catch (error) {
    report.failures.push(`${BENCH}: ${errorText(error)}`);
  } finally {
    await server.stop();
    await dropDatabase(ctx.facts.pgAdminUrl, DATABASE).catch(() => {});
  }
  return report;
}
