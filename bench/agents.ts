// Issue 19's benchmark: an agent's x402 fetch of a paid URL, end to end, beside a plain
// `@x402/fetch` client paying the same kind of URL in the same run.
//
// Against one server with its own anvil (PostgreSQL database), one payment at a time, interleaved:
// 1. plain: the official @x402/fetch client with its own funded key pays a fresh pay URL of the
//    demo book (GET → 402 → sign → GET with PAYMENT-SIGNATURE → 200), timed end to end;
// 2. agent: an agent of another book posts that URL to POST /agent/x402; Tollbook checks the
//    token and the fence, fetches, reserves the quote under the agent's lock, signs with the
//    agent's sealed key through the same client, pays, records, answers; timed end to end.
// Target: Tollbook's added time, median(2) - median(1), is at most 25% of median(1).

import { performance } from 'node:perf_hooks';
import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { type Address, createPublicClient, defineChain, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  type BenchContext,
  type BenchReport,
  fmt,
  latencyRow,
  latencySummary,
  postJson,
  type ServerHandle,
  withFreshServer,
} from './lib.ts';

const BENCH = 'agents';
const DATABASE = 'tollbook_bench_agents';
const ROUNDS = Number(process.env.BENCH_AGENTS_ROUNDS ?? 40);
const WARMUP_ROUNDS = 5;
const TARGET_SHARE = 0.25;

async function call(baseUrl: string, method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** An owner, a book and an active agent allowed to pay this server's host, its wallet funded. */
async function makeAgent(server: ServerHandle & { key: string }) {
  const email = `bench-${Date.now()}@example.com`;
  const signup = await fetch(`${server.baseUrl}/app/api/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: `pw-${Date.now()}-bench`, name: 'Bench owner' }),
  }).then((res) => res.json() as Promise<{ session_token: string }>);
  const session = signup.session_token;
  const space = await call(server.baseUrl, 'POST', '/app/api/spaces', session, {
    name: 'Agent book',
    base_currency: 'USD',
    plan: 'pro',
  });
  // Pay URLs name PUBLIC_URL's host (localhost), the API is reached at 127.0.0.1: both are allowed.
  const { host, port } = new URL(server.baseUrl);
  const issued = await call(server.baseUrl, 'POST', `/app/api/spaces/${space.id}/agents`, session, {
    name: 'Bench agent',
    perms: ['x402'],
    fence: {
      x402_hosts: [host, `localhost:${port}`],
      allowed_merchants: [],
      per_request_usd: '5',
      daily_usd: '1000000',
    },
  });
  await call(server.baseUrl, 'PATCH', `/app/api/spaces/${space.id}/agents/${issued.agent_id}`, session, {
    status: 'active',
  });
  const funded = await postJson(server.baseUrl, server.key, '/dev/faucet', {
    address: issued.wallet_address,
    usdc: '100000',
  });
  if (funded.status !== 200) throw new Error(`Faucet: ${JSON.stringify(funded.json)}`);
  return {
    token: String(issued.token),
    rpcUrl: String(funded.json.rpc_url),
    asset: funded.json.asset as Address,
  };
}

export async function prepare(server: ServerHandle & { key: string }) {
  const accounts = await fetch(`${server.baseUrl}/integration/accounts`, {
    headers: { authorization: `Bearer ${server.key}` },
  }).then((res) => res.json() as Promise<{ items: { id: string; kind: string }[] }>);
  const wallet = accounts.items.find((account) => account.kind === 'crypto');
  if (!wallet) throw new Error('The demo space has no crypto account (is the local chain on?).');
  const agent = await makeAgent(server);
  const payer = privateKeyToAccount(generatePrivateKey());
  const funded = await postJson(server.baseUrl, server.key, '/dev/faucet', {
    address: payer.address,
    usdc: '100000',
  });
  if (funded.status !== 200) throw new Error(`Faucet: ${JSON.stringify(funded.json)}`);
  const chain = defineChain({
    id: 31337,
    name: 'local',
    nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [agent.rpcUrl] } },
  });
  const publicClient = createPublicClient({ chain, transport: http(agent.rpcUrl), pollingInterval: 100 });
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: toClientEvmSigner(payer, publicClient as never) });
  client.setSpendControls({ allowedAssets: [{ network: 'eip155:31337', asset: agent.asset }] });
  return { server, wallet, agent, plainFetch: wrapFetchWithPayment(fetch, client) };
}

export type Setup = Awaited<ReturnType<typeof prepare>>;

async function mint(setup: Setup): Promise<string> {
  const minted = await postJson(setup.server.baseUrl, setup.server.key, '/integration/payment-requests', {
    account_id: setup.wallet.id,
    amount: '1',
  });
  if (minted.status !== 201) throw new Error(`Mint: ${JSON.stringify(minted.json)}`);
  return String(minted.json.url);
}

export async function plainRound(setup: Setup): Promise<number> {
  const url = await mint(setup);
  const started = performance.now();
  const res = await setup.plainFetch(url, { headers: { accept: 'application/json' } });
  const body = await res.text();
  const elapsed = performance.now() - started;
  if (res.status !== 200) throw new Error(`Plain client answered ${res.status}: ${body.slice(0, 300)}`);
  return elapsed;
}

export async function agentRound(setup: Setup): Promise<number> {
  const url = await mint(setup);
  const started = performance.now();
  const out = await call(setup.server.baseUrl, 'POST', '/agent/x402', setup.agent.token, { url });
  const elapsed = performance.now() - started;
  const result = out.result as { status?: number; paid?: unknown } | null;
  if (out.applied !== true || result?.status !== 200 || !result.paid) {
    throw new Error(`The agent fetch did not pay: ${JSON.stringify(out).slice(0, 300)}`);
  }
  return elapsed;
}

export async function benchAgents(ctx: BenchContext): Promise<BenchReport> {
  ctx.log(`agents: ${ROUNDS} x402 payments each way, interleaved, on the server's own anvil (PostgreSQL)`);
  return withFreshServer(
    ctx,
    BENCH,
    DATABASE,
    async (server, _databaseUrl, report) => {
      const setup = await prepare(server);
      for (let round = 0; round < WARMUP_ROUNDS; round++) {
        await plainRound(setup);
        await agentRound(setup);
      }
      const plain: number[] = [];
      const agent: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        plain.push(await plainRound(setup));
        agent.push(await agentRound(setup));
      }
      const p = latencySummary(plain);
      const a = latencySummary(agent);
      ctx.log(
        `    plain @x402/fetch client, end to end:     p50 ${fmt(p.p50, 2)} ms, p99 ${fmt(p.p99, 2)} ms`,
      );
      ctx.log(
        `    agent POST /agent/x402, end to end:       p50 ${fmt(a.p50, 2)} ms, p99 ${fmt(a.p99, 2)} ms`,
      );
      for (const [route, values] of [
        ['plain @x402/fetch', p],
        ['POST /agent/x402', a],
      ] as const) {
        report.rows.push(latencyRow(BENCH, route, values));
      }
      const added = a.p50 - p.p50;
      const allowed = p.p50 * TARGET_SHARE;
      ctx.log(
        `    target: added ${fmt(added, 2)} ms <= 25% of the plain client's ${fmt(p.p50, 2)} ms (${fmt(allowed, 2)} ms)   ${added <= allowed ? 'PASS' : 'FAIL'}`,
      );
      report.targets.push({
        bench: BENCH,
        config: 'postgres',
        what: 'median ms Tollbook adds to a plain x402 client',
        value: added,
        target: allowed,
        pass: added <= allowed,
        atMost: true,
        contaminated: false,
      });
    },
    { CHAIN: '1', WEBHOOK_ALLOW_PRIVATE: '1' },
  );
}
