import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { type Address, getAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Chain } from '../../src/platform/chain/chain.ts';
import { EIP3009_TOKEN_ABI } from '../../src/platform/chain/token.ts';
import { SecretBox } from '../../src/platform/crypto.ts';
import { createHarness, type Harness } from '../harness.ts';
import { buildChainApp, startTestChain } from './chain-setup.ts';
import { freePort } from './x402-setup.ts';

// The agent's hot wallet on anvil: balances from the chain, a transfer signed with the agent's
// own key and sent by the gas wallet, booked as money.out; idempotent; outside the fence a
// proposal; and the wallet key in no answer, log line or event.

let chain: Chain;
let app: FastifyInstance;
let h: Harness;
let base: string;
const secrets = new SecretBox(randomBytes(32).toString('hex'));
const logLines: string[] = [];

beforeAll(async () => {
  chain = await startTestChain();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const env = { NODE_ENV: 'test', DATA_DIR: 'memory://', PUBLIC_URL: base, RATE_LIMIT_PER_MINUTE: '100000' };
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  // Every line the server logs at any level is kept, to look for the key in it.
  app = await buildChainApp(chain, env, { secrets, logger: pino({ level: 'trace' }, sink) });
  await app.listen({ port, host: '127.0.0.1' });
  h = await createHarness({ env });
}, 120_000);
afterAll(async () => {
  await app?.close();
  await h?.close();
  await chain?.close();
});

const answers: string[] = [];
async function api(
  method: string,
  path: string,
  token: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  answers.push(text);
  // biome-ignore lint/suspicious/noExplicitAny: the assertions read the fields.
  return { status: res.status, body: JSON.parse(text) as Record<string, any> };
}

const usdcOf = (address: string) =>
  chain.local!.publicClient.readContract({
    address: chain.local!.network.token.address,
    abi: EIP3009_TOKEN_ABI,
    functionName: 'balanceOf',
    args: [address as Address],
  });

async function agentWorld(fence: Record<string, unknown> = {}) {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner);
  const issued = await api('POST', `/app/api/spaces/${spaceId}/agents`, owner.token, {
    name: 'Buyer bot',
    perms: ['wallet'],
    fence: {
      x402_hosts: [],
      allowed_merchants: ['Acme Supplies'],
      per_request_usd: '5',
      daily_usd: '20',
      ...fence,
    },
  });
  expect(issued.status).toBe(201);
  await api('PATCH', `/app/api/spaces/${spaceId}/agents/${issued.body.agent_id}`, owner.token, {
    status: 'active',
  });
  const token = issued.body.token as string;
  const wallet = issued.body.wallet_address as string;
  await chain.local!.fund(wallet as Address, 10_000_000n, 0n);
  return { owner, spaceId, token, wallet, agentId: issued.body.agent_id as string };
}

const destination = () => privateKeyToAccount(generatePrivateKey()).address;
const transfer = (token: string, body: Record<string, unknown>, key?: string) =>
  api(
    'POST',
    '/agent/wallet/transfers',
    token,
    { chain: 'evm', asset: 'USDC', network: 'local', payee: 'Acme Supplies', ...body },
    key ? { 'idempotency-key': key } : {},
  );

describe('the agent hot wallet', () => {
  it('reads its balances from the chain', async () => {
    const world = await agentWorld();
    const res = await api('GET', '/agent/wallet', world.token);
    expect(res.status).toBe(200);
    expect(res.body.address).toBe(getAddress(world.wallet));
    expect(res.body.balances).toEqual([
      { network: 'local', asset: 'USDC', amount: '10.00000000', native: '0.00000000' },
    ]);
  });

  it('shows a native balance finer than eight places exactly, not as zero', async () => {
    const world = await agentWorld();
    await chain.local!.fund(world.wallet as Address, 0n, 10n ** 18n + 1n);
    const res = await api('GET', '/agent/wallet', world.token);
    expect(res.status).toBe(200);
    expect(res.body.balances).toEqual([
      { network: 'local', asset: 'USDC', amount: '10.00000000', native: '1.000000000000000001' },
    ]);
  });

  it('sends within the fence through the gas wallet, books money.out, and answers a retry once', async () => {
    const world = await agentWorld();
    const to = destination();
    const first = await transfer(world.token, { amount: '2', destination: to }, 'pay-1');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      applied: true,
      proposal_id: null,
      result: { amount: '2.00000000', asset: 'USDC', network: 'local', destination: getAddress(to) },
    });
    expect(first.body.result.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await usdcOf(to)).toBe(2_000_000n);
    expect(await usdcOf(world.wallet)).toBe(8_000_000n);
    const again = await transfer(world.token, { amount: '2', destination: to }, 'pay-1');
    expect(again.body).toEqual(first.body);
    expect(await usdcOf(to)).toBe(2_000_000n);
    const reused = await transfer(world.token, { amount: '3', destination: to }, 'pay-1');
    expect(reused.status).toBe(422);
    expect(reused.body.error).toBe('idempotency_key_reused');
    const events = await h.db
      .selectFrom('outbox_events')
      .select(['event', 'payload'])
      .where('space_id', '=', world.spaceId)
      .where('event', '=', 'money.out')
      .execute();
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({
      transaction_id: first.body.result.transaction_id,
      account_id: first.body.result.account_id,
      amount: '2.00000000',
      currency: 'USDC',
      origin: 'rail',
    });
  });

  it('makes a proposal outside the fence and sends nothing', async () => {
    const world = await agentWorld();
    const to = destination();
    const gasNonce = await chain.local!.publicClient.getTransactionCount({ address: chain.gasWallet! });
    const over = await transfer(world.token, { amount: '6', destination: to });
    expect(over.body).toMatchObject({ applied: false, result: null });
    expect(over.body.message).toContain('per_request_usd');
    const stranger = await transfer(world.token, { amount: '1', destination: to, payee: 'Someone' });
    expect(stranger.body.message).toContain('allowed_merchants');
    expect(await usdcOf(to)).toBe(0n);
    expect(await chain.local!.publicClient.getTransactionCount({ address: chain.gasWallet! })).toBe(gasNonce);
    const bad = await transfer(world.token, { amount: '1', destination: to, asset: 'DAI' });
    expect(bad.body).toMatchObject({ error: 'invalid_request', details: { field: 'asset' } });
    const tiny = await transfer(world.token, { amount: '0.0000001', destination: to });
    expect(tiny.body).toMatchObject({ error: 'amount_not_accepted' });
  });

  it('gives a refused transfer’s reservation back to the day’s total', async () => {
    const world = await agentWorld();
    const to = destination();
    for (const key of ['day-1', 'day-2']) {
      expect((await transfer(world.token, { amount: '5', destination: to }, key)).body.applied).toBe(true);
    }
    // The wallet is empty now: the chain refuses the third, and the day counts only the two.
    const refused = await transfer(world.token, { amount: '5', destination: to }, 'day-3');
    expect(refused.status).toBe(502);
    expect(refused.body.error).toBe('transfer_failed');
    const row = await h.db
      .selectFrom('agents')
      .select('spent_usd')
      .where('id', '=', world.agentId)
      .executeTakeFirstOrThrow();
    expect(row.spent_usd).toBe('10.00000000');
    const spends = await h.db
      .selectFrom('agent_spend')
      .select('amount_usd')
      .where('agent_id', '=', world.agentId)
      .execute();
    expect(spends).toHaveLength(2);
  });

  it('never shows, logs or emits the wallet key', async () => {
    const world = await agentWorld();
    await transfer(world.token, { amount: '1', destination: destination() });
    const row = await h.db
      .selectFrom('agents')
      .select('wallet_key_sealed')
      .where('id', '=', world.agentId)
      .executeTakeFirstOrThrow();
    const key = secrets.open(row.wallet_key_sealed);
    expect(key).toMatch(/^0x[0-9a-f]{64}$/);
    expect(privateKeyToAccount(key as `0x${string}`).address.toLowerCase()).toBe(world.wallet);
    const bare = key.slice(2);
    for (const text of answers) expect(text.toLowerCase()).not.toContain(bare);
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) expect(line.toLowerCase()).not.toContain(bare);
    const events = await h.db.selectFrom('outbox_events').select('payload').execute();
    for (const event of events) expect(JSON.stringify(event.payload).toLowerCase()).not.toContain(bare);
  });
});
