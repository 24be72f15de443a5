// Issue 15: reading a request body is linear in its size. Times parseJsonBody (and the money
// grammar on any amount it yields) on the worst bodies we can build, at 256 KiB and at the
// 1 MiB limit, in process: the growth from one size to the other should be about 4x, and the
// worst case at the limit is the figure reported.

import { BODY_LIMIT_BYTES } from '../src/app.ts';
import { parseAmountInput } from '../src/core/money.ts';
import { parseJsonBody } from '../src/platform/http/json-body.ts';
import { type BenchContext, type BenchReport, emptyReport, fmt } from './lib.ts';
import { worstBodies } from './worst-bodies.ts';

const BENCH = 'parse';
const RUNS = 9;
/** Target: the worst body at the size limit is read in at most this many milliseconds. */
const WORST_AT_LIMIT_MS = 500;

function readOnce(text: string): void {
  try {
    const value = parseJsonBody(text) as { amount?: unknown } | unknown[];
    if (!Array.isArray(value) && value && typeof value === 'object' && 'amount' in value)
      parseAmountInput(value.amount);
  } catch {
    // A refusal is an answer too; its time counts the same.
  }
}

function medianMs(text: string): number {
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    readOnce(text);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

export async function benchParse(ctx: BenchContext): Promise<BenchReport> {
  const report = emptyReport();
  const quarter = worstBodies(BODY_LIMIT_BYTES / 4);
  const full = worstBodies(BODY_LIMIT_BYTES - 1);
  let worst = 0;
  for (const [index, body] of full.entries()) {
    const small = medianMs(quarter[index]!.text);
    const large = medianMs(body.text);
    worst = Math.max(worst, large);
    ctx.log(
      `    ${body.name.padEnd(24)} 256 KiB ${fmt(small).padStart(7)} ms   1 MiB ${fmt(large).padStart(7)} ms   ` +
        `growth x${fmt(large / Math.max(small, 0.001))}`,
    );
    report.rows.push({
      bench: BENCH,
      config: 'in-process',
      route: body.name,
      rps: 1000 / Math.max(large, 0.001),
      p50: large,
      p99: large,
      non2xx: 0,
      errors: 0,
      serverCpu: null,
      otherCpu: null,
    });
  }
  report.targets.push({
    bench: BENCH,
    config: 'in-process',
    what: 'worst body read at the 1 MiB limit (ms)',
    value: worst,
    target: WORST_AT_LIMIT_MS,
    pass: worst <= WORST_AT_LIMIT_MS,
    atMost: true,
    contaminated: false,
  });
  return report;
}
