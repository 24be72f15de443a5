// Invoice mirroring (issue 6): creating an invoice with 200 lines through HTTP on PostgreSQL,
// one at a time, p50 and p99. Target: p99 under 50 ms.

import { type BenchContext, type BenchReport, fmt, percentile, postJson, withFreshServer } from './lib.ts';

const BENCH = 'invoices';
const LINES = 200;
const INVOICES = 60;
const WARMUP = 5;

function invoiceBody(accountId: string) {
  return {
    account_id: accountId,
    client_name: 'Bench Client Ltd',
    client_email: 'billing@example.com',
    due_on: '2026-12-31',
    currency: 'EUR',
    line_items: Array.from({ length: LINES }, (_, index) => ({
      description: `Consulting block ${index + 1}`,
      unit_price: index % 7 === 0 ? '99.995' : '12.50',
      quantity: index % 3 === 0 ? '1.5' : '2',
      tax_kind: index % 4 === 0 ? 'reduced' : 'standard',
      tax_rate: index % 4 === 0 ? '7' : '19',
    })),
  };
}

export function benchInvoices(ctx: BenchContext): Promise<BenchReport> {
  return withFreshServer(ctx, BENCH, 'tollbook_bench_invoices', async (server, _databaseUrl, report) => {
    const account = await postJson(server.baseUrl, server.key, '/integration/accounts', {
      kind: 'bank',
      name: 'Bench EUR',
      currency: 'EUR',
    });
    if (account.status !== 201)
      throw new Error(`account answered ${account.status}: ${JSON.stringify(account.json)}`);
    const latencies: number[] = [];
    for (let index = 0; index < INVOICES + WARMUP; index++) {
      const created = await postJson(
        server.baseUrl,
        server.key,
        '/integration/invoices',
        invoiceBody(String(account.json.id)),
      );
      if (created.status !== 201)
        throw new Error(`invoice answered ${created.status}: ${JSON.stringify(created.json).slice(0, 300)}`);
      if (index >= WARMUP) latencies.push(created.ms);
    }
    latencies.sort((a, b) => a - b);
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
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
  });
}
