import { execFile } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PgCluster, startPgCluster } from './fixtures/pg-cluster.ts';
import { waitFor } from './fixtures/ports.ts';
import { type ServerProcess, startServerProcess } from './fixtures/server-process.ts';

// The database restarts while a server takes 200 concurrent charges, each with its own
// Idempotency-Key. A charge the server acknowledged is booked exactly once; the ones it could not
// finish are answered 503 with Retry-After and, retried with the same key once the database is
// back, end in one outcome each. The server process is never restarted.

const DATABASE = 'tb_restart';
const CHARGES = 200;
const TOP_UP = '10';
const PRICE = '0.01';

let cluster: PgCluster;
let server: ServerProcess;
let databaseUrl: string;

beforeAll(async () => {
  cluster = await startPgCluster();
  databaseUrl = await cluster.createDatabase(DATABASE);
  server = await startServerProcess(
    { DATABASE_URL: databaseUrl, RATE_LIMIT_PER_MINUTE: '1000000' },
    { startTimeoutMs: 200_000 },
  );
}, 300_000);
afterAll(async () => {
  if (server?.alive()) {
    server.kill('SIGTERM');
    await server.exited;
  }
  await cluster?.destroy();
});

type Answer = {
  status: number;
  retryAfter: string | null;
  body: { error?: string; paid?: boolean; entry_id?: string | null; balance_usd?: string };
};

async function call(method: string, path: string, payload: unknown, headers: Record<string, string> = {}) {
  try {
    const res = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(payload),
    });
    const text = await res.text();
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: JSON.parse(text),
    } as Answer;
  } catch (error) {
    // A reset connection or a body that is not JSON: never an acceptable answer.
    return { status: 0, retryAfter: null, body: { error: String(error) } } as Answer;
  }
}

async function healthy(): Promise<boolean> {
  try {
    const res = await fetch(`${server.baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** `tollbook ledger check` against the cluster's database, as an operator runs it. */
function ledgerCheck(): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      ['bin/tollbook.mjs', 'ledger', 'check'],
      { env: { ...process.env, DATABASE_URL: databaseUrl, REDIS_URL: '', LOG_LEVEL: 'silent' } },
      (error, stdout) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout }),
    ),
  );
}

async function query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<R[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** A fresh client of a fresh USD bank account, topped up by card with TOP_UP dollars. */
async function fundedClient(): Promise<{ accountId: string; clientRef: string }> {
  const account = await call('POST', '/integration/accounts', {
    kind: 'bank',
    name: 'Restart bank',
    currency: 'USD',
  });
  expect(account.status, JSON.stringify(account.body)).toBe(201);
  const accountId = (account.body as { id: string }).id;
  const clientRef = `restart-${Date.now()}`;
  const refused = await call('POST', '/integration/charges', {
    account_id: accountId,
    client_ref: clientRef,
    amount: PRICE,
    top_up_amount: TOP_UP,
  });
  expect(refused.body.paid).toBe(false);
  const token = (refused.body as { top_up: { token: string } }).top_up.token;
  const paid = await fetch(`${server.baseUrl}/pay/${token}/card`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ number: '4242424242424242', exp: '12/34', cvc: '123' }),
  });
  expect(((await paid.json()) as { status: string }).status).toBe('paid');
  return { accountId, clientRef };
}

/** Every answer is an acknowledged charge or the 503 with Retry-After; never a 500 or a reset. */
function expectAcknowledgedOrRetry(answers: Answer[]) {
  for (const answer of answers) {
    if (answer.status === 200) {
      expect(answer.body.paid).toBe(true);
      continue;
    }
    expect(answer.status, JSON.stringify(answer.body)).toBe(503);
    expect(answer.retryAfter).toBe('1');
    expect(answer.body.error).toBe('service_unavailable');
  }
}

describe('a PostgreSQL restart during 200 concurrent charges', () => {
  it('books every acknowledged charge once, answers 503 with Retry-After meanwhile, and the retries end once each', async () => {
    const { accountId, clientRef } = await fundedClient();
    const pid = server.pid;
    const charge = (index: number) =>
      call(
        'POST',
        '/integration/charges',
        { account_id: accountId, client_ref: clientRef, amount: PRICE },
        { 'idempotency-key': `restart-charge-${index}` },
      );

    const first = new Map<number, Answer>();
    const load = Array.from({ length: CHARGES }, async (_, index) => {
      first.set(index, await charge(index));
    });
    // Restart once the load is under way: some charges answered, most still in flight or queued.
    await waitFor('the first charges are answered', async () => first.size >= 5, 30_000, 5);
    await cluster.restart('fast');
    await Promise.all(load);

    const firstAnswers = [...first.values()];
    expectAcknowledgedOrRetry(firstAnswers);
    const unanswered = [...first].filter(([, answer]) => answer.status !== 200).map(([index]) => index);
    // The restart really cut charges: otherwise this test proved nothing.
    expect(unanswered.length).toBeGreaterThan(0);

    // The same process answers again once the database is back.
    await waitFor('/healthz answers 200', healthy, 15_000);
    expect(server.alive()).toBe(true);
    expect(server.pid).toBe(pid);

    // Each 503'd charge retried with its own key until it ends: acknowledged (a replay when the
    // first attempt had committed), never booked a second time. A claim the cut attempt left
    // behind answers 409 idempotency_in_progress until its lease lapses.
    const final = new Map(first);
    await Promise.all(
      unanswered.map(async (index) => {
        await waitFor(
          `charge ${index} ends after the restart`,
          async () => {
            const answer = await charge(index);
            if (answer.status === 409) expect(answer.body.error).toBe('idempotency_in_progress');
            else if (answer.status !== 200) expectAcknowledgedOrRetry([answer]);
            final.set(index, answer);
            return answer.status === 200;
          },
          120_000,
          500,
        );
      }),
    );

    const acknowledged = [...final.values()];
    expect(acknowledged.every((answer) => answer.status === 200 && answer.body.paid)).toBe(true);
    const entryIds = new Set(acknowledged.map((answer) => answer.body.entry_id));
    expect(entryIds.size).toBe(CHARGES);

    const booked = await query<{ entry_id: string; in_ledger: boolean }>(
      `SELECT c.entry_id, EXISTS (SELECT 1 FROM ledger_entries e WHERE e.id = c.entry_id) AS in_ledger
         FROM charges c JOIN client_credits cc ON cc.id = c.client_credit_id
        WHERE cc.client_ref = $1`,
      [clientRef],
    );
    expect(booked.length).toBe(CHARGES);
    expect(booked.every((row) => row.in_ledger)).toBe(true);
    expect(new Set(booked.map((row) => row.entry_id))).toEqual(entryIds);

    // The client's balance is the top-up less exactly the acknowledged charges (200 × 0.01).
    const balance = await call('POST', '/integration/charges', {
      account_id: accountId,
      client_ref: clientRef,
      amount: '1000000',
    });
    expect(balance.body).toMatchObject({ paid: false, balance_usd: '8.00000000' });

    const check = await ledgerCheck();
    expect(check.stdout).toContain('The ledger is sound.');
    expect(check.code).toBe(0);
    expect(server.output()).not.toMatch(
      /Unhandled 'error' event|unhandled promise rejection|uncaught exception/,
    );
  }, 300_000);
});
