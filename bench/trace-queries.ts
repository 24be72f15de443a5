// A preload for profiling the server a benchmark starts: every statement sent through `pg`
// (BEGIN, COMMIT and advisory locks included) is written to BENCH_TRACE_FILE as one line of
// JSON: when it was sent, how long until its answer, and the start of its text. Use it as
//   BENCH_TRACE_FILE=/tmp/trace.jsonl BENCH_NODE_ARGS="--import tsx --import ./bench/trace-queries.ts" \
//     npm run bench -- x402
// and read the file with `bench/trace-report.ts`. Only for measuring: it slows every statement.
// The node's JSON-RPC calls (viem's `fetch`) are written too, as `rpc <method>`, so one
// payment's timeline shows what it waited for; `--timeline` in the report prints it.

import { subscribe } from 'node:diagnostics_channel';
import { appendFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';

const file = process.env.BENCH_TRACE_FILE;
type QueryFn = (...args: unknown[]) => unknown;

function textOf(first: unknown): string {
  if (typeof first === 'string') return first;
  if (first && typeof first === 'object' && 'text' in first) return String((first as { text: unknown }).text);
  return '?';
}

if (file) {
  const lines: string[] = [];
  const flush = () => {
    if (lines.length > 0) appendFileSync(file, lines.splice(0).join(''));
  };
  setInterval(flush, 500).unref();
  process.on('exit', flush);
  const original = pg.Client.prototype.query as unknown as QueryFn;
  (pg.Client.prototype as unknown as { query: QueryFn }).query = function traced(
    this: pg.Client,
    ...args: unknown[]
  ) {
    const sent = performance.now();
    const text = textOf(args[0]).replace(/\s+/g, ' ').trim().slice(0, 160);
    const record = () => {
      const line = {
        at: Number((performance.timeOrigin + sent).toFixed(3)),
        ms: performance.now() - sent,
        text,
      };
      lines.push(`${JSON.stringify(line)}\n`);
    };
    const result = original.apply(this, args);
    if (result && typeof (result as Promise<unknown>).then === 'function') {
      (result as Promise<unknown>).then(record, record);
    }
    return result;
  };
  const fetchOriginal = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const sent = performance.now();
    const body = typeof init?.body === 'string' ? init.body : '';
    const method = /"method":"([^"]+)"/.exec(body)?.[1] ?? String(input).slice(0, 60);
    try {
      return await fetchOriginal(input, init);
    } finally {
      const line = { at: Number((performance.timeOrigin + sent).toFixed(3)), ms: performance.now() - sent };
      lines.push(`${JSON.stringify({ ...line, text: `rpc ${method}` })}\n`);
    }
  };
  // Requests the server received and answered, as `http <method> <path>` (start) and `http end`.
  const mark = (text: string) => {
    const line = { at: Number((performance.timeOrigin + performance.now()).toFixed(3)), ms: 0, text };
    lines.push(`${JSON.stringify(line)}\n`);
  };
  subscribe('http.server.request.start', (message) => {
    const { request } = message as { request: { method: string; url: string } };
    mark(`http ${request.method} ${request.url.slice(0, 40)}`);
  });
  subscribe('http.server.response.finish', () => mark('http end'));
}
