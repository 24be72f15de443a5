// Issue 34's benchmark: an x402 call paid from a prepaid credit through sign-in-with-x against a
// plain charge. Both are one HTTP call to the running server with an Idempotency-Key, as the
// seller-side helpers send them, interleaved one at a time on the same account:
// 1. plain: `POST /integration/charges` for a funded client_ref;
// 2. sign-in: `POST /integration/x402/credit-calls` with a fresh SIGN-IN-WITH-X header, made
//    beforehand (untimed) with the extension's own client helpers, for the credit of the
//    signer's address: the server parses, validates and verifies the sign-in, accepts its nonce
//    and charges the credit.
// Target: the sign-in call's median is within 2 ms of the plain charge's.

import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createSIWxPayload, encodeSIWxHeader } from '@x402/extensions/sign-in-with-x';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { fundClients } from './charges.ts';
import {
  type BenchContext,
  type BenchReport,
  fmt,
  latencyRow,
  latencySummary,
  type ServerHandle,
} from './lib.ts';

const BENCH = 'x402';
const ROUNDS = Number(process.env.BENCH_X402_CREDIT_ROUNDS ?? 300);
const WARMUP_ROUNDS = 20;
const TARGET_WITHIN_MS = 2;
const PRICE = '0.0001';
/** A resource URL the sign-ins are bound to; nothing is fetched from it. */
const RESOURCE = 'http://127.0.0.1:1/report';

type Setup = { server: ServerHandle; key: string; accountId: string; payer: PrivateKeyAccount };

async function post(
  setup: Setup,
  path: string,
  body: unknown,
): Promise<{ ms: number; json: Record<string, unknown> }> {
  const started = performance.now();
  const res = await fetch(`${setup.server.baseUrl}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${setup.key}`,
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
    },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  const ms = performance.now() - started;
  if (res.status !== 200 || json.paid !== true)
    throw new Error(`${path} answered ${res.status}: ${JSON.stringify(json).slice(0, 300)}`);
  return { ms, json };
}

function plainRound(setup: Setup) {
  return post(setup, '/integration/charges', {
    client_ref: 'bench-x402-plain',
    account_id: setup.accountId,
    amount: PRICE,
  });
}

async function signInRound(setup: Setup) {
  const uri = new URL(RESOURCE);
  const info = {
    domain: uri.host,
    uri: RESOURCE,
    version: '1',
    nonce: randomBytes(16).toString('hex'),
    issuedAt: new Date().toISOString(),
    chainId: 'eip155:31337',
    type: 'eip191' as const,
  };
  const signIn = encodeSIWxHeader(await createSIWxPayload(info, setup.payer, RESOURCE));
  return post(setup, '/integration/x402/credit-calls', {
    sign_in: signIn,
    resource: RESOURCE,
    account_id: setup.accountId,
    amount: PRICE,
  });
}

async function prepare(server: ServerHandle & { key: string }): Promise<Setup> {
  const headers = { authorization: `Bearer ${server.key}` };
  const res = await fetch(`${server.baseUrl}/integration/accounts`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'bank', name: 'Credit bench', currency: 'USD' }),
  });
  const account = (await res.json()) as { id?: string };
  if (res.status !== 201 || !account.id) throw new Error(`Creating the USD account answered ${res.status}.`);
  const payer = privateKeyToAccount(generatePrivateKey());
  await fundClients(server, headers, account.id, ['bench-x402-plain', `evm:${payer.address.toLowerCase()}`]);
  return { server, key: server.key, accountId: account.id, payer };
}

/**
 * Measures a sign-in-from-credit call against a plain charge on a running server (its key needs
 * the payments scope) and adds the rows and the target to `report`.
 */
export async function benchX402Credit(
  ctx: BenchContext,
  server: ServerHandle & { key: string },
  report: BenchReport,
): Promise<void> {
  const setup = await prepare(server);
  for (let round = 0; round < WARMUP_ROUNDS; round++) {
    await plainRound(setup);
    await signInRound(setup);
  }
  const plain: number[] = [];
  const signedIn: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    plain.push((await plainRound(setup)).ms);
    signedIn.push((await signInRound(setup)).ms);
  }
  const p = latencySummary(plain);
  const s = latencySummary(signedIn);
  ctx.log(`  x402 credit: ${ROUNDS} calls each way, interleaved, one at a time`);
  ctx.log(
    `    plain charge (POST /integration/charges):         p50 ${fmt(p.p50, 2)} ms, p99 ${fmt(p.p99, 2)} ms`,
  );
  ctx.log(
    `    sign-in-with-x from credit (POST .../credit-calls): p50 ${fmt(s.p50, 2)} ms, p99 ${fmt(s.p99, 2)} ms`,
  );
  const added = s.p50 - p.p50;
  ctx.log(
    `    target: sign-in median over the plain charge's ${fmt(added, 2)} ms (p99 ${fmt(s.p99 - p.p99, 2)} ms)   ` +
      `target <= ${TARGET_WITHIN_MS} ms   ${added <= TARGET_WITHIN_MS ? 'PASS' : 'FAIL'}`,
  );
  for (const [route, values] of [
    ['plain charge', p],
    ['sign-in-with-x charge from credit', s],
  ] as const) {
    report.rows.push(latencyRow(BENCH, route, values));
  }
  report.targets.push({
    bench: BENCH,
    config: 'postgres',
    what: 'median ms a sign-in-with-x credit call adds over a plain charge',
    value: added,
    target: TARGET_WITHIN_MS,
    pass: added <= TARGET_WITHIN_MS,
    atMost: true,
    contaminated: false,
  });
}
