// The owner's web app: how long a page takes in a full book. A fresh server, a person signed up
// with a book, an account and a key; 10,000 payment requests minted through the integration API;
// then the Payment requests page (the book's biggest list, first page of 50) and the Accounts
// page are loaded under load with the session cookie. Then Home, on a second book grown by the
// scale bench's SQL seed to 1,000,000 ledger postings and 100,000 payment requests
// (BENCH_APP_HOME_POSTINGS sets the postings; the requests follow at one per ten postings); the
// seeding's time is reported. Target for every page: p99 < 100 ms at the bench's connections; a
// second run at 5 connections shows the page's own answer time.

import { createHash } from 'node:crypto';
import pg from 'pg';
import { fundClients } from './charges.ts';
import {
  type BenchContext,
  type BenchReport,
  describeCpu,
  fmt,
  logRunWarnings,
  measure,
  measuredRow,
  postJson,
  withFreshServer,
} from './lib.ts';
import { nothingSeeded, seedStep } from './scale-seed.ts';

const BENCH = 'app';
// The one database this checkout may use on the shared server (dropped and made afresh).
const DATABASE = process.env.BENCH_APP_DATABASE || 'tollbook_bench_app';
const ROWS = 10_000;
const MINT_CONCURRENCY = 16;
const P99_TARGET_MS = 100;
// A handful of people clicking without pause: more than a book's members do at once.
const LIGHT_CONNECTIONS = 5;
const HOME_POSTINGS = Number(process.env.BENCH_APP_HOME_POSTINGS || 1_000_000);

export async function sessionJson(
  baseUrl: string,
  cookie: string,
  csrf: string,
  path: string,
  body: unknown,
) {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (response.status >= 300) throw new Error(`${path} answered ${response.status}: ${JSON.stringify(json)}`);
  return json;
}

/** A person with a book, a crypto account and a key: what the page will show. */
export async function seedBook(baseUrl: string) {
  const signup = await fetch(`${baseUrl}/app/api/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      email: `bench-${Date.now()}@example.com`,
      password: 'bench password 1',
      name: 'Bench',
    }),
  });
  const session = (await signup.json()) as { session_token: string; csrf_token: string };
  if (signup.status !== 201) throw new Error(`signup answered ${signup.status}`);
  const cookie = `tb_session=${session.session_token}`;
  const csrf = session.csrf_token;
  const space = await sessionJson(baseUrl, cookie, csrf, '/app/api/spaces', {
    name: 'Bench book',
    base_currency: 'USD',
    plan: 'scale',
  });
  const spaceId = String(space.id);
  const account = await sessionJson(baseUrl, cookie, csrf, `/app/api/spaces/${spaceId}/accounts`, {
    kind: 'crypto',
    name: 'Wallet',
    currency: 'USDC',
    network: 'local',
    address: `0x${'2'.repeat(40)}`,
  });
  const key = await sessionJson(baseUrl, cookie, csrf, `/app/api/spaces/${spaceId}/keys`, {
    name: 'Bench key',
    scopes: ['payments'],
  });
  return { cookie, csrf, spaceId, accountId: String(account.id), key: String(key.key) };
}

async function mintRows(baseUrl: string, key: string, accountId: string) {
  let next = 0;
  const worker = async () => {
    while (next < ROWS) {
      const index = next++;
      const posted = await postJson(baseUrl, key, '/integration/payment-requests', {
        account_id: accountId,
        amount: `${(index % 97) + 1}.25`,
        memo: `Bench request ${index}`,
      });
      if (posted.status !== 201) throw new Error(`mint ${index} answered ${posted.status}`);
    }
  };
  await Promise.all(Array.from({ length: MINT_CONCURRENCY }, worker));
}

/**
 * Vacuums the tables the bench has just filled and gives the planner their statistics, as
 * autovacuum does on its own after this many new rows on any PostgreSQL left at its defaults (the
 * scale bench does the same). The CI machine's PostgreSQL runs with autovacuum off, so without
 * this the tables look empty to the planner, and the list is read by scanning and sorting all
 * 10,000 requests of the book (4–12 ms of PostgreSQL a page) instead of the 51 newest from the
 * index (0.05 ms); and no page is known all-visible, so an index that carries what a read needs
 * (Home's open totals) still visits the table for every row: figures of that server's settings,
 * not of the page.
 */
export async function analyze(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
}

export async function benchApp(ctx: BenchContext): Promise<BenchReport> {
  return withFreshServer(ctx, BENCH, DATABASE, async (server, databaseUrl, report) => {
    const book = await seedBook(server.baseUrl);
    const started = Date.now();
    await mintRows(server.baseUrl, book.key, book.accountId);
    ctx.log(`  ${ROWS} payment requests minted in ${fmt((Date.now() - started) / 1000, 1)} s`);
    await analyze(databaseUrl);
    for (const screen of ['payment-requests', 'accounts']) {
      const url = `${server.baseUrl}/app/books/${book.spaceId}/${screen}`;
      const check = await fetch(url, { headers: { cookie: book.cookie } });
      const body = await check.text();
      if (check.status !== 200 || (screen === 'payment-requests' && !body.includes('Next page'))) {
        throw new Error(`GET ${screen} answered ${check.status} without its first page`);
      }
      await measurePage(ctx, server, report, { url, cookie: book.cookie, config: `${ROWS} rows`, screen });
    }
    await benchHome(ctx, server, databaseUrl, report);
  });
}

/**
 * One page at the bench's connections (against the target) and at a few (the page's own answer
 * time, no target: 50 connections build a queue on one process).
 */
async function measurePage(
  ctx: BenchContext,
  server: Parameters<Parameters<typeof withFreshServer>[3]>[0],
  report: BenchReport,
  page: { url: string; cookie: string; config: string; screen: string },
) {
  for (const connections of [ctx.settings.connections, LIGHT_CONNECTIONS]) {
    const m = await measure({
      url: page.url,
      headers: { cookie: page.cookie },
      settings: { ...ctx.settings, connections },
      serverPid: server.pid,
    });
    const route = `GET /app/books/:id/${page.screen}`;
    ctx.log(
      `    ${route}, ${connections} connections  ${fmt(m.rps)} req/s   p50 ${fmt(m.p50)} ms   p99 ${fmt(m.p99)} ms   ${fmt(m.total)} responses`,
    );
    ctx.log(`      cpu: ${describeCpu(m.cpu)}`);
    logRunWarnings(ctx, m, route, 'req/s', server);
    const config = `${page.config}, ${connections} connections`;
    report.rows.push(measuredRow({ bench: BENCH, config, route }, m));
    if (connections !== ctx.settings.connections) continue;
    report.targets.push({
      bench: BENCH,
      config,
      what: `${page.screen || 'Home'} page p99 (ms)`,
      value: m.p99,
      target: P99_TARGET_MS,
      pass: m.p99 < P99_TARGET_MS && m.non2xx === 0,
      atMost: true,
      contaminated: m.discarded.length > 0,
    });
  }
}

/** Home on a book grown by SQL to HOME_POSTINGS postings and a tenth as many payment requests. */
async function benchHome(
  ctx: BenchContext,
  server: Parameters<Parameters<typeof withFreshServer>[3]>[0],
  databaseUrl: string,
  report: BenchReport,
) {
  const book = await seedBook(server.baseUrl);
  const bank = await sessionJson(
    server.baseUrl,
    book.cookie,
    book.csrf,
    `/app/api/spaces/${book.spaceId}/accounts`,
    {
      kind: 'bank',
      name: 'USD bank',
      currency: 'USD',
    },
  );
  // One client funded by card, as in the scale bench: the book's general income account then
  // exists for the seed to post to.
  await fundClients(server, { authorization: `Bearer ${book.key}` }, String(bank.id), ['home-bench-client']);
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  try {
    const hash = createHash('sha256').update(book.key).digest('hex');
    const key = await db.query<{ id: string }>('SELECT id FROM integration_keys WHERE key_hash = $1', [hash]);
    const keyId = key.rows[0]?.id;
    if (!keyId) throw new Error("the book's key is not in integration_keys (by its sha256 hash)");
    const requests = Math.round(HOME_POSTINGS / 10);
    const started = Date.now();
    await seedStep(
      db,
      { spaceId: book.spaceId, keyId, bankAccountId: String(bank.id), cryptoAccountId: book.accountId },
      nothingSeeded(),
      { ...nothingSeeded(), postings: HOME_POSTINGS, paymentRequests: requests, openOnCrypto: requests / 10 },
    );
    await analyze(databaseUrl);
    ctx.log(
      `  Home's book seeded by SQL with ${fmt(HOME_POSTINGS)} ledger postings and ${fmt(requests)} payment requests in ${fmt((Date.now() - started) / 1000, 1)} s`,
    );
  } finally {
    await db.end();
  }
  const url = `${server.baseUrl}/app/books/${book.spaceId}`;
  const check = await fetch(url, { headers: { cookie: book.cookie }, redirect: 'manual' });
  const body = await check.text();
  if (check.status !== 200 || !body.includes('Money in')) {
    throw new Error(`GET Home answered ${check.status} without its money-in panel`);
  }
  await measurePage(ctx, server, report, {
    url,
    cookie: book.cookie,
    config: `${fmt(HOME_POSTINGS)} postings`,
    screen: '',
  });
}
