// Draws the scale bench's curve as an SVG line chart: every figure relative to its value at the
// smallest step (1.0 = no change), against the book's postings on a log scale, with the issue's
// bands (throughput at least 0.8, page p99 at most 1.25).
//   npx tsx bench/scale-chart.ts [curve.json] [out.svg]
// Defaults: BENCH_SCALE_JSON or .bench/scale.json, and docs/scale-curve.svg. The SVG is built as a
// tree of typed elements and rendered with escaping in one place.

import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './lib.ts';
import type { ScaleCurve, ScaleStep } from './scale.ts';

type Attributes = Record<string, string | number>;
type SvgNode = { tag: string; attributes: Attributes; children: (SvgNode | string)[] };

function el(tag: string, attributes: Attributes, ...children: (SvgNode | string)[]): SvgNode {
  return { tag, attributes, children };
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const escapeXml = (text: string) => text.replace(/[&<>"]/g, (char) => ESCAPES[char]!);

function render(node: SvgNode | string, depth = 0): string {
  if (typeof node === 'string') return escapeXml(node);
  const attributes = Object.entries(node.attributes)
    .map(([name, value]) => ` ${name}="${escapeXml(String(value))}"`)
    .join('');
  if (node.children.length === 0) return `<${node.tag}${attributes}/>`;
  const inline = node.children.every((child) => typeof child === 'string');
  const inner = node.children.map((child) => render(child, depth + 1));
  if (inline) return `<${node.tag}${attributes}>${inner.join('')}</${node.tag}>`;
  const pad = '  '.repeat(depth + 1);
  return `<${node.tag}${attributes}>\n${inner.map((line) => pad + line).join('\n')}\n${'  '.repeat(depth)}</${node.tag}>`;
}

type Series = { name: string; color: string; value: (step: ScaleStep) => number | null };

// The ledger check's rate is judged as an absolute figure (postings a second at the largest
// step), and at the smallest step its time is mostly start-up, so its ratio would say nothing
// and squash every other line: it stays in the bench's table, off the chart.

const SERIES: Series[] = [
  { name: 'charges/s', color: '#1f77b4', value: (step) => step.chargesPerSecond },
  { name: 'mints/s (crowded account)', color: '#ff7f0e', value: (step) => step.mintsPerSecond },
  { name: 'webhook deliveries/s', color: '#2ca02c', value: (step) => step.webhookDeliveriesPerSecond },
  {
    name: 'Payment requests p99',
    color: '#d62728',
    value: (step) => step.pageP99['Payment requests'] ?? null,
  },
  { name: 'Invoices p99', color: '#9467bd', value: (step) => step.pageP99.Invoices ?? null },
  { name: 'Ledger p99', color: '#8c564b', value: (step) => step.pageP99.Ledger ?? null },
  { name: 'Income p99', color: '#bcbd22', value: (step) => step.pageP99.Income ?? null },
  { name: 'Home p99', color: '#e377c2', value: (step) => step.pageP99.Home ?? null },
  { name: 'MB per million postings', color: '#17becf', value: (step) => step.bytesPerMillionPostings },
];

const WIDTH = 820;
const HEIGHT = 440;
const PLOT = { left: 60, top: 40, right: 560, bottom: 390 };

function chart(curve: ScaleCurve): SvgNode {
  const steps = curve.steps;
  if (steps.length < 2) throw new Error('the curve needs at least two steps');
  const xs = steps.map((step) => Math.log10(Math.max(step.bookPostings, 1)));
  const [xMin, xMax] = [Math.min(...xs), Math.max(...xs)];
  const lines = SERIES.map((series) => {
    const base = series.value(steps[0]!);
    const points = steps.map((step, index) => {
      const value = series.value(step);
      return base && value !== null ? { x: xs[index]!, y: value / base } : null;
    });
    return { series, points: points.filter((point) => point !== null) };
  });
  const yMax = Math.max(2, ...lines.flatMap((line) => line.points.map((point) => point.y))) * 1.05;
  const px = (x: number) => PLOT.left + ((x - xMin) / (xMax - xMin || 1)) * (PLOT.right - PLOT.left);
  const py = (y: number) => PLOT.bottom - (y / yMax) * (PLOT.bottom - PLOT.top);
  const text = (x: number, y: number, content: string, extra: Attributes = {}) =>
    el('text', { x, y, 'font-size': 12, 'font-family': 'sans-serif', ...extra }, content);
  // The floor's label sits at the left, below its line; the ceiling's at the right, above it.
  const band = (y: number, label: string, color: string, below: boolean) => [
    el('line', {
      x1: PLOT.left,
      x2: PLOT.right,
      y1: py(y),
      y2: py(y),
      stroke: color,
      'stroke-dasharray': '6 4',
    }),
    below
      ? text(PLOT.left + 6, py(y) + 14, label, { fill: color })
      : text(PLOT.right - 4, py(y) - 4, label, { 'text-anchor': 'end', fill: color }),
  ];
  const yTicks = Array.from({ length: Math.floor(yMax / 0.5) + 1 }, (_, index) => index * 0.5);
  return el(
    'svg',
    { xmlns: 'http://www.w3.org/2000/svg', width: WIDTH, height: HEIGHT, viewBox: `0 0 ${WIDTH} ${HEIGHT}` },
    el('rect', { x: 0, y: 0, width: WIDTH, height: HEIGHT, fill: '#ffffff' }),
    text(
      PLOT.left,
      24,
      `Cost as one book grows (each figure ÷ its value at ${steps[0]!.bookPostings.toLocaleString('en-US')} postings)`,
      {
        'font-size': 14,
        'font-weight': 'bold',
      },
    ),
    el('line', { x1: PLOT.left, x2: PLOT.left, y1: PLOT.top, y2: PLOT.bottom, stroke: '#333' }),
    el('line', { x1: PLOT.left, x2: PLOT.right, y1: PLOT.bottom, y2: PLOT.bottom, stroke: '#333' }),
    ...yTicks.map((tick) => text(PLOT.left - 8, py(tick) + 4, tick.toFixed(1), { 'text-anchor': 'end' })),
    ...steps.map((step, index) =>
      text(px(xs[index]!), PLOT.bottom + 18, step.bookPostings.toLocaleString('en-US'), {
        'text-anchor': 'middle',
      }),
    ),
    text((PLOT.left + PLOT.right) / 2, HEIGHT - 8, "the book's ledger postings (log scale)", {
      'text-anchor': 'middle',
    }),
    ...band(0.8, 'throughput floor 0.8', '#2ca02c', true),
    ...band(1.25, 'page p99 ceiling 1.25', '#d62728', false),
    ...lines.map((line) =>
      el('polyline', {
        points: line.points.map((point) => `${px(point.x).toFixed(1)},${py(point.y).toFixed(1)}`).join(' '),
        fill: 'none',
        stroke: line.series.color,
        'stroke-width': 2,
      }),
    ),
    ...lines.flatMap((line, index) => [
      el('rect', {
        x: PLOT.right + 20,
        y: PLOT.top + 10 + index * 22 - 9,
        width: 14,
        height: 4,
        fill: line.series.color,
      }),
      text(PLOT.right + 40, PLOT.top + 10 + index * 22 - 3, line.series.name),
    ]),
  );
}

function main(): void {
  const input = path.resolve(ROOT, process.argv[2] ?? process.env.BENCH_SCALE_JSON ?? '.bench/scale.json');
  const output = path.resolve(ROOT, process.argv[3] ?? 'docs/scale-curve.svg');
  const curve = JSON.parse(readFileSync(input, 'utf8')) as ScaleCurve;
  writeFileSync(output, `${render(chart(curve))}\n`);
  process.stdout.write(`wrote ${path.relative(ROOT, output)} from ${path.relative(ROOT, input)}\n`);
}

main();
