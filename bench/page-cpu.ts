// Server CPU of one owner's-app page, measured in process, so the figure does not depend on how
// busy a shared machine is: the real app on PostgreSQL (DATABASE_URL), a book seeded once with
// 10,000 payment requests minted through the integration API (kept between runs in
// PAGE_CPU_SEED, so before and after read the same rows), then the Payment requests, Accounts
// and Home pages rendered through `app.inject`, one at a time, in rounds; the CPU time of the process
// (user + system, the database's excluded) per page, best round, and the statements each page
// sends. Run: DATABASE_URL=… npx tsx bench/page-cpu.ts; with PAGE_CPU_PROFILE=file.cpuprofile the
// Payment requests page's rounds (only they) are profiled into that file.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { CompiledQuery } from 'kysely';
import pg from 'pg';
import { createHarness } from '../test/harness.ts';

const ROWS = 10_000;
const MINT_CONCURRENCY = 8;
const SEED_FILE = process.env.PAGE_CPU_SEED ?? '/tmp/page-cpu-seed.json';
const ROUNDS = Number(process.env.PAGE_CPU_ROUNDS ?? 9);
const PAGES_PER_ROUND = Number(process.env.PAGE_CPU_PAGES ?? 200);
const PROFILE_FILE = process.env.PAGE_CPU_PROFILE;
// Pages in flight at once: 1 measures a page alone; the app bench's 50 connections keep 50 pages'
// rows and markup alive together, which makes garbage collection dearer (PAGE_CPU_CONCURRENCY=50).
const CONCURRENCY = Number(process.env.PAGE_CPU_CONCURRENCY ?? 1);

type Seed = { token: string; spaceId: string };

// The database's side of a page: the CPU time (user + system, from /proc) of this database's
// backends, which serve only this process here (the bench's own query of pg_stat_activity runs
// on a separate client and is left out). PostgreSQL shares the machine's cores with the server,
// so its CPU a page weighs on the app bench's p99 as the server's does.
const TICKS_PER_SECOND = 100;
async function backendPids(): Promise<number[]> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const result = await original.call(
      client,
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    return (result as { rows: { pid: number }[] }).rows.map((row) => row.pid);
  } finally {
    await client.end();
  }
}
function backendTicks(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // A backend that ended meanwhile: its time is lost to this round only.
    }
  }
  return ticks;
}

type QueryFn = (...args: unknown[]) => unknown;
let statements = 0;
const original = pg.Client.prototype.query as unknown as QueryFn;
(pg.Client.prototype as unknown as { query: QueryFn }).query = function counted(this: pg.Client, ...args) {
  statements += 1;
  return original.apply(this, args);
};

async function seed(harness: Awaited<ReturnType<typeof createHarness>>): Promise<Seed> {
  const { owner, spaceId, key } = await harness.world({ scopes: ['payments'] });
  const account = await harness.makeWallet(spaceId, `0x${'2'.repeat(40)}`);
  let next = 0;
  const worker = async () => {
    while (next < ROWS) {
      const index = next++;
      const res = await harness.inject({
        method: 'POST',
        url: '/integration/payment-requests',
        key: key.key,
        payload: { account_id: account.id, amount: `${(index % 97) + 1}.25`, memo: `Bench request ${index}` },
      });
      if (res.statusCode !== 201) throw new Error(`mint ${index}: ${res.statusCode} ${res.body}`);
    }
  };
  await Promise.all(Array.from({ length: MINT_CONCURRENCY }, worker));
  return { token: owner.token, spaceId };
}

async function main() {
  if (!process.env.DATABASE_URL) throw new Error('Set DATABASE_URL to a PostgreSQL database.');
  const harness = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '10000000' } });
  const saved = existsSync(SEED_FILE) ? (JSON.parse(readFileSync(SEED_FILE, 'utf8')) as Seed) : undefined;
  const book = saved ?? (await seed(harness));
  if (!saved) writeFileSync(SEED_FILE, JSON.stringify(book));
  // Statistics, as autovacuum would gather them (it is off on the CI machine's PostgreSQL).
  await harness.database.db.executeQuery(CompiledQuery.raw('ANALYZE', []));
  const headers = { cookie: `tb_session=${book.token}` };
  for (const screen of ['payment-requests', 'accounts', 'home']) {
    // Home is the book's root.
    const url = `/app/books/${book.spaceId}${screen === 'home' ? '' : `/${screen}`}`;
    const first = await harness.app.inject({ method: 'GET', url, headers });
    if (first.statusCode !== 200) throw new Error(`${url}: ${first.statusCode}`);
    // Warm up as the rounds run, so the pool holds the connections they use.
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = 0; i < 50; i++) await harness.app.inject({ method: 'GET', url, headers });
      }),
    );
    const before = statements;
    await harness.app.inject({ method: 'GET', url, headers });
    const perPage = statements - before;
    const rounds: number[] = [];
    const databaseRounds: number[] = [];
    const pids = await backendPids();
    const profiler = PROFILE_FILE && screen === 'payment-requests' ? new Session() : undefined;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    for (let round = 0; round < ROUNDS; round++) {
      const start = process.cpuUsage();
      const databaseStart = backendTicks(pids);
      let left = PAGES_PER_ROUND;
      const loader = async () => {
        while (left > 0) {
          left -= 1;
          await harness.app.inject({ method: 'GET', url, headers });
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, loader));
      const used = process.cpuUsage(start);
      rounds.push((used.user + used.system) / 1000 / PAGES_PER_ROUND);
      databaseRounds.push(((backendTicks(pids) - databaseStart) * 1000) / TICKS_PER_SECOND / PAGES_PER_ROUND);
    }
    if (profiler && PROFILE_FILE) {
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(PROFILE_FILE, JSON.stringify(profile));
      profiler.disconnect();
    }
    rounds.sort((a, b) => a - b);
    databaseRounds.sort((a, b) => a - b);
    const median = rounds[Math.floor(rounds.length / 2)] ?? 0;
    const databaseMedian = databaseRounds[Math.floor(databaseRounds.length / 2)] ?? 0;
    console.log(
      `${screen}: ${perPage} statements a page, ${first.body.length} bytes; CPU a page: best ${rounds[0]?.toFixed(3)} ms, median ${median.toFixed(3)} ms (${ROUNDS} rounds of ${PAGES_PER_ROUND}, ${CONCURRENCY} at once); database CPU a page (${pids.length} backends): best ${databaseRounds[0]?.toFixed(3)} ms, median ${databaseMedian.toFixed(3)} ms`,
    );
  }
  await harness.close();
  await harness.database.close();
}

await main();
process.exit(0);
