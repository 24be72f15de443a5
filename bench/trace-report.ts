// Reads a statement trace written by bench/trace-queries.ts and prints, per statement text, how
// many were sent and their median and total time; with `--per <text>`, the counts are also
// divided by the number of statements starting with that text (say, one per payment):
//   npx tsx bench/trace-report.ts /tmp/trace.jsonl --per 'insert into "x402_settlements"'
// With `--timeline <text>`, it prints instead, in time order, everything from the last line
// starting with that text (say, a paid GET's `http GET /pay`) to the next `http end`: when each
// statement or node call began after it, and how long it took.

import { readFileSync } from 'node:fs';

type Line = { at: number; ms: number; text: string };

const [file, flag, marker] = process.argv.slice(2);
if (!file || (flag !== undefined && ((flag !== '--per' && flag !== '--timeline') || !marker))) {
  process.stdout.write('usage: trace-report.ts <trace.jsonl> [--per|--timeline <statement prefix>]\n');
  process.exit(1);
}
const lines: Line[] = readFileSync(file, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line) as Line);
if (flag === '--timeline') {
  lines.sort((a, b) => a.at - b.at);
  const starts = lines.flatMap((line, index) => (line.text.startsWith(marker!) ? [index] : []));
  const first = starts.at(-1) ?? 0;
  const end = lines.findIndex((line, index) => index > first && line.text === 'http end');
  const origin = lines[first]?.at ?? 0;
  for (const line of lines.slice(first, end < 0 ? undefined : end + 1)) {
    const begun = (line.at - origin).toFixed(2).padStart(8);
    process.stdout.write(`+${begun} ms  ${line.ms.toFixed(2).padStart(6)} ms  ${line.text.slice(0, 110)}\n`);
  }
  process.exit(0);
}
const groups = new Map<string, number[]>();
for (const line of lines) {
  const key = line.text.slice(0, 90);
  const times = groups.get(key) ?? [];
  times.push(line.ms);
  groups.set(key, times);
}
const per = marker ? lines.filter((line) => line.text.startsWith(marker)).length : 0;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const rows = [...groups].sort((a, b) => b[1].length - a[1].length);
for (const [text, times] of rows) {
  const total = times.reduce((sum, ms) => sum + ms, 0);
  const share = per > 0 ? ` ${(times.length / per).toFixed(2).padStart(6)}/each` : '';
  process.stdout.write(
    `${String(times.length).padStart(6)}${share}  median ${median(times).toFixed(2).padStart(6)} ms  total ${total.toFixed(1).padStart(8)} ms  ${text}\n`,
  );
}
if (per > 0)
  process.stdout.write(
    `${lines.length} statements, ${per} marked: ${(lines.length / per).toFixed(2)} each\n`,
  );
