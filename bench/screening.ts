// `npm run bench -- screening`: the two figures of the sanctions list. One destination (a payee
// name and an address) screened against a list of 20,000 entries with near matching on, in
// process (the index a server holds): p50 and p99 per screen. Loading a 20 MB SDN.XML into the
// database the server reads (parse, one transaction, index built): wall time and the process's
// peak resident memory during the load.

import { performance } from 'node:perf_hooks';
import { systemClock } from '../src/core/clock.ts';
import {
  buildIndex,
  DEFAULT_MIN_SCORE,
  loadScreeningList,
  matchSubject,
  parseSdnXml,
  screen,
} from '../src/features/screening/index.ts';
import { openDatabase } from '../src/platform/db/database.ts';
import { migrate } from '../src/platform/db/migrate.ts';
import { type BenchContext, type BenchReport, dropDatabase, emptyReport, fmt, freshDatabase } from './lib.ts';

const BENCH = 'screening';
const DATABASE = 'tollbook_bench_screening';
const ENTRIES = 20_000;
const SCREENS = 5_000;
const SCREEN_TARGET_MS = 1;
const WARMUP_SCREENS = 1_000;
const LOAD_BYTES = 20 * 1024 * 1024;

const SYLLABLES = [
  'ka',
  'ri',
  'mo',
  'sel',
  'van',
  'tor',
  'li',
  'dan',
  'gur',
  'ash',
  'ne',
  'bo',
  'zim',
  'har',
  'qu',
  'pel',
  'os',
  'tre',
  'mi',
  'yan',
];

/** A made-up word spelt from `n` in base 20 syllables, so names (and their first letters) vary as a real list's do. */
function word(n: number, length: number): string {
  let text = '';
  for (let left = n, at = 0; at < length; at++, left = Math.floor(left / SYLLABLES.length)) {
    text += SYLLABLES[left % SYLLABLES.length];
  }
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A made-up person's name: distinct for every n below 20^4. */
const nameOf = (n: number) => ({ first: word(n * 7 + 3, 2), last: word(n, 4) });

/**
 * An SDN.XML of people, each with two a.k.a.s and an address, repeated until it is `bytes` long
 * (near OFAC's own mix: most entries are names, some carry digital currency addresses).
 */
function sdnXml(bytes: number): { xml: string; people: number } {
  const parts = [
    '<?xml version="1.0"?><sdnList><publshInformation><Publish_Date>11/20/2026</Publish_Date></publshInformation>',
  ];
  let size = parts[0]!.length;
  let people = 0;
  while (size < bytes) {
    const { first, last } = nameOf(people);
    const hex = people.toString(16).padStart(40, '0');
    const entry =
      `<sdnEntry><uid>${people}</uid><firstName>${first}</firstName><lastName>${last}</lastName>` +
      '<sdnType>Individual</sdnType><programList><program>SDGT</program><program>CYBER2</program></programList>' +
      `<akaList><aka><uid>${people}1</uid><type>a.k.a.</type><category>strong</category><lastName>${last} ${first}</lastName></aka>` +
      `<aka><uid>${people}2</uid><type>a.k.a.</type><category>weak</category><lastName>${first.toUpperCase()} ${last.toUpperCase()}OV</lastName></aka></akaList>` +
      `<idList><id><uid>${people}3</uid><idType>Digital Currency Address - ETH</idType><idNumber>0x${hex}</idNumber></id></idList>` +
      '<addressList><address><uid>1</uid><city>Somewhere</city><country>Nowhere</country></address></addressList></sdnEntry>';
    parts.push(entry);
    size += entry.length;
    people += 1;
  }
  parts.push('</sdnList>');
  return { xml: parts.join(''), people };
}

/** One destination against 20,000 entries, near matching on: a name near a listed one half the time. */
function benchMatching(ctx: BenchContext, report: BenchReport) {
  const entries = [];
  for (let n = 0; entries.length < ENTRIES; n++) {
    const { first, last } = nameOf(n);
    entries.push({
      kind: 'name',
      value: `${first} ${last}`.toLowerCase(),
      sdn_uid: String(n),
      listed: `${first} ${last}`,
      programs: 'SDGT',
    });
    entries.push({
      kind: 'address',
      value: `0x${n.toString(16).padStart(40, '0')}`,
      sdn_uid: String(n),
      listed: last,
      programs: 'SDGT',
    });
  }
  const index = buildIndex(entries);
  // Half are a listed name misspelt at its end (a near match), half a name nobody lists.
  const payeeOf = (i: number) => {
    const { first, last } = nameOf((i * 7919) % (ENTRIES / 2));
    return i % 2 === 0 ? `${last}f ${first}` : `Payee Number${i} Holdings`;
  };
  // A server screens with an index it has held for a while: the first screens (compiling the
  // matcher, collecting what building the index left) are run and not counted.
  for (let i = 0; i < WARMUP_SCREENS; i++) {
    matchSubject(index, { address: `0x${'f'.repeat(40)}`, names: [payeeOf(SCREENS + i)] }, DEFAULT_MIN_SCORE);
  }
  const latencies: number[] = [];
  // The process's CPU time per screen beside the wall time: on a shared machine the wall time's
  // tail is mostly time the screen spent waiting for a core, which the CPU time leaves out.
  const cpuTimes: number[] = [];
  let held = 0;
  for (let i = 0; i < SCREENS; i++) {
    const payee = payeeOf(i);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const hit = matchSubject(index, { address: `0x${'f'.repeat(40)}`, names: [payee] }, DEFAULT_MIN_SCORE);
    latencies.push(performance.now() - started);
    const cpu = process.cpuUsage(cpuBefore);
    cpuTimes.push((cpu.user + cpu.system) / 1000);
    if (hit) held++;
  }
  const quantile = (values: number[], share: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))]!;
  };
  const p99 = quantile(latencies, 0.99);
  ctx.log(
    `  one destination against ${fmt(ENTRIES)} entries (near matching): p50 ${fmt(quantile(latencies, 0.5), 3)} ms, ` +
      `p99 ${fmt(p99, 3)} ms over ${fmt(SCREENS)} screens, ${fmt(held)} held (target p99 < ${SCREEN_TARGET_MS} ms); ` +
      `CPU time per screen p50 ${fmt(quantile(cpuTimes, 0.5), 3)} ms, p99 ${fmt(quantile(cpuTimes, 0.99), 3)} ms (reported)`,
  );
  if (held < SCREENS / 2)
    report.failures.push(`${BENCH}: only ${held} of ${SCREENS / 2} near names were held`);
  report.targets.push({
    bench: BENCH,
    config: 'in process',
    what: `screening p99 ms (${fmt(ENTRIES)} entries, near matching)`,
    value: p99,
    target: SCREEN_TARGET_MS,
    pass: p99 < SCREEN_TARGET_MS,
    atMost: true,
    contaminated: false,
  });
}

/** Loads a 20 MB SDN.XML into a fresh database; reports the time and the peak resident memory. */
async function benchLoad(ctx: BenchContext, report: BenchReport) {
  const pgUrl = ctx.facts.pg.ok ? await freshDatabase(ctx.facts.pgAdminUrl, DATABASE) : undefined;
  const database = await openDatabase({ databaseUrl: pgUrl, dataDir: 'memory://', poolSize: 2 });
  try {
    await migrate(database);
    const { xml, people } = sdnXml(LOAD_BYTES);
    let peak = process.memoryUsage().rss;
    const before = peak;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 5);
    const started = performance.now();
    const loaded = await loadScreeningList({ db: database.db, clock: systemClock }, xml, 'bench', {
      force: true,
    });
    // The first screen after a load builds the process's index from the database.
    await screen(database.db, { address: `0x${'0'.repeat(40)}`, names: [] });
    const elapsedMs = performance.now() - started;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    if (!loaded.ok) {
      report.failures.push(`${BENCH}: the list did not load: ${loaded.problem}`);
      return;
    }
    const parsed = parseSdnXml(xml);
    const config = pgUrl ? 'postgres' : 'pglite';
    ctx.log(
      `  loading ${fmt(xml.length / 1024 / 1024, 1)} MB SDN.XML (${fmt(people)} people, ${fmt(loaded.entries)} entries) on ${config}: ` +
        `${fmt(elapsedMs / 1000, 2)} s, peak RSS ${fmt(peak / 1024 / 1024, 0)} MB (${fmt((peak - before) / 1024 / 1024, 0)} MB above the start)`,
    );
    if (parsed.ok && parsed.list.entries.length !== loaded.entries) {
      report.failures.push(
        `${BENCH}: loaded ${loaded.entries} entries, the file has ${parsed.list.entries.length}`,
      );
    }
    report.targets.push(
      {
        bench: BENCH,
        config,
        what: 'load 20 MB SDN.XML (s)',
        value: elapsedMs / 1000,
        target: Number.POSITIVE_INFINITY,
        pass: true,
        atMost: true,
        contaminated: false,
      },
      {
        bench: BENCH,
        config,
        what: 'load 20 MB SDN.XML peak RSS (MB)',
        value: peak / 1024 / 1024,
        target: Number.POSITIVE_INFINITY,
        pass: true,
        atMost: true,
        contaminated: false,
      },
    );
  } finally {
    await database.close();
    if (pgUrl) await dropDatabase(ctx.facts.pgAdminUrl, DATABASE);
  }
}

export async function benchScreening(ctx: BenchContext): Promise<BenchReport> {
  const report = emptyReport();
  benchMatching(ctx, report);
  await benchLoad(ctx, report);
  return report;
}
