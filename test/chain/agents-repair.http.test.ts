import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import {
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
} from '@x402/core/http';
import type { FastifyInstance } from 'fastify';
import { type Address, getAddress, type Hex, parseSignature, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Clock, systemClock } from '../../src/core/clock.ts';
import { asAmount, formatAmount } from '../../src/core/money.ts';
import { REPAIR_GRACE_MS, repairAgentWrites } from '../../src/features/agents/index.ts';
import * as agentStore from '../../src/features/agents/store.ts';
import { bookWalletOutIf, readyWalletAccount, walletBalances } from '../../src/features/agents/wallet.ts';
import { countSpend } from '../../src/features/agents/writes.ts';
import { watchOnce } from '../../src/features/chain-watch/index.ts';
import { checkLedger, readAmount } from '../../src/features/ledger/index.ts';
import { type Chain, connectClients } from '../../src/platform/chain/chain.ts';
import { networkDefinition } from '../../src/platform/chain/networks.ts';
import { chainUnknownTotal } from '../../src/platform/chain/outcome.ts';
import { EIP3009_TOKEN_ABI, TRANSFER_WITH_AUTHORIZATION_TYPES } from '../../src/platform/chain/token.ts';
import { SecretBox } from '../../src/platform/crypto.ts';
import {
  FAILING_FAULTS,
  FAULTS,
  type RpcFaultProxy,
  startRpcFaultProxy,
} from '../fixtures/rpc-fault-proxy.ts';
import { createHarness, type Harness } from '../harness.ts';
import { buildChainApp, startTestChain } from './chain-setup.ts';
import { freePort, sendTokenTransfer, takeTurnWatchingChains, type X402World } from './x402-setup.ts';

// Issue 19's repair on anvil. A process that dies between claiming an agent write and recording
// its outcome leaves it in sending (or approving) with its signed authorization recorded; the
// kill points are made here by doing the live path's steps by hand up to the point of death.
// And the agent's wallet, proven by its making, is followed by the chain watch: its funding is
// booked once, and the book's balance agrees with GET /agent/wallet after spending.

let chain: Chain;
let app: FastifyInstance;
let h: Harness;
let base: string;
let endTurn: () => Promise<void>;
const secrets = new SecretBox(randomBytes(32).toString('hex'));
/** The repair's clock: past every grace period. */
const later: Clock = { now: () => new Date(Date.now() + REPAIR_GRACE_MS + 60_000) };

beforeAll(async () => {
  endTurn = await takeTurnWatchingChains();
  chain = await startTestChain();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const env = {
    NODE_ENV: 'test',
    DATA_DIR: 'memory://',
    PUBLIC_URL: base,
    RATE_LIMIT_PER_MINUTE: '100000',
    WEBHOOK_ALLOW_PRIVATE: '1',
  };
  app = await buildChainApp(chain, env, { secrets });
  await app.listen({ port, host: '127.0.0.1' });
  h = await createHarness({ env });
  // The watch starts from the chain's head: what came before this file is not its business.
  await watchOnce({ db: h.db, clock: systemClock, chain, confirmations: { local: 0 } });
}, 120_000);
afterAll(async () => {
  await app?.close();
  await h?.close();
  await chain?.close();
  await endTurn?.();
});

// biome-ignore lint/suspicious/noExplicitAny: the assertions read the fields.
type Body = Record<string, any>;
async function api(method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Body };
}

const SHORT_VALIDITY_SECONDS = 4;
const repairDeps = () => ({ db: h.db, clock: later, chain });
const token = () => chain.local!.network.token;
const usdcOf = (address: string) =>
  chain.local!.publicClient.readContract({
    address: token().address,
    abi: EIP3009_TOKEN_ABI,
    functionName: 'balanceOf',
    args: [address as Address],
  });

async function agentWorld(fundUsdc = 10_000_000n, hosts: string[] = []) {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner);
  const issued = await api('POST', `/app/api/spaces/${spaceId}/agents`, owner.token, {
    name: 'Repair bot',
    perms: ['wallet', 'x402'],
    fence: { x402_hosts: hosts, allowed_merchants: ['Acme Supplies'], per_request_usd: '5', daily_usd: '20' },
  });
  expect(issued.status).toBe(201);
  await api('PATCH', `/app/api/spaces/${spaceId}/agents/${issued.body.agent_id}`, owner.token, {
    status: 'active',
  });
  const wallet = issued.body.wallet_address as string;
  if (fundUsdc > 0n) await chain.local!.fund(wallet as Address, fundUsdc, 0n);
  return {
    owner,
    spaceId,
    token: issued.body.token as string,
    wallet,
    agentId: issued.body.agent_id as string,
  };
}

type World = Awaited<ReturnType<typeof agentWorld>>;

async function agentKey(agentId: string) {
  const row = await h.db
    .selectFrom('agents')
    .select('wallet_key_sealed')
    .where('id', '=', agentId)
    .executeTakeFirstOrThrow();
  return secrets.open(row.wallet_key_sealed) as Hex;
}

/** A signed transfer authorization from the agent's wallet, valid `seconds` of chain time. */
type SignedMessage = Awaited<ReturnType<typeof authorize>>['message'];

/** Records a signed authorization on the write, as the agent's path does before sending it. */
function recordMessage(writeId: string, message: SignedMessage) {
  return agentStore.recordSigned(h.db, writeId, {
    network: 'local',
    nonce: message.nonce,
    value: message.value,
    validBefore: new Date(Number(message.validBefore) * 1000),
  });
}

async function authorize(world: World, to: Address, value: bigint, seconds: number) {
  const account = privateKeyToAccount(await agentKey(world.agentId));
  const block = await chain.local!.publicClient.getBlock({ blockTag: 'latest' });
  const message = {
    from: account.address,
    to,
    value,
    validAfter: 0n,
    validBefore: block.timestamp + BigInt(seconds),
    nonce: toHex(randomBytes(32)),
  };
  const signature = await account.signTypedData({
    domain: {
      name: token().name,
      version: token().version,
      chainId: chain.local!.network.chainId,
      verifyingContract: token().address,
    },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  return { message, signature };
}

/** Puts an authorization on chain as the gas wallet would (any sender will do). */
async function broadcast(signed: Awaited<ReturnType<typeof authorize>>) {
  const { v, r, s } = parseSignature(signed.signature);
  const m = signed.message;
  const hash = await chain.local!.walletClient.writeContract({
    address: token().address,
    abi: EIP3009_TOKEN_ABI,
    functionName: 'transferWithAuthorization',
    args: [m.from, m.to, m.value, m.validAfter, m.validBefore, m.nonce, Number(v), r, s],
  });
  const receipt = await chain.local!.publicClient.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
  return hash;
}

/**
 * The live path up to its kill point: the write reserved (sending, with its spend) or claimed
 * (approving), and its authorization signed and recorded; then the process dies.
 */
async function leftOnItsWay(
  world: World,
  options: {
    kind?: 'wallet_transfer' | 'x402';
    status?: 'sending' | 'approving';
    signed?: boolean;
    validSeconds?: number;
  } = {},
) {
  const to = privateKeyToAccount(generatePrivateKey()).address;
  const writeId = randomUUID();
  const now = new Date();
  const kind = options.kind ?? 'wallet_transfer';
  const input =
    kind === 'wallet_transfer'
      ? {
          chain: 'evm',
          asset: 'USDC',
          network: 'local',
          amount: '2',
          destination: to,
          payee: 'Acme Supplies',
        }
      : { url: 'https://paid.example/report', quoted: '2.00000000', asset: 'USDC' };
  const where = { id: writeId, spaceId: world.spaceId, agentId: world.agentId, kind, input, at: now };
  if (options.status === 'approving') {
    await agentStore.insertWrite(h.db, { ...where, message: 'fence', status: 'pending', result: null });
    await agentStore.claimWrite(h.db, writeId, world.owner.id, now);
  } else {
    await agentStore.insertWrite(h.db, { ...where, message: '', status: 'sending', result: null });
    await h.db.transaction().execute(async (tx) => {
      const agent = await agentStore.lockAgent(tx, world.agentId);
      await countSpend(tx, agent, { writeId, amount: asAmount(200_000_000n), at: now });
    });
  }
  const signed = await authorize(world, to, 2_000_000n, options.validSeconds ?? 120);
  if (options.signed !== false) {
    const recorded = await recordMessage(writeId, signed.message);
    expect(recorded).toBe(true);
  }
  return { writeId, to, signed };
}

const writeOf = (id: string) =>
  h.db.selectFrom('agent_writes').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const entriesOf = (writeId: string) =>
  h.db
    .selectFrom('ledger_entries')
    .select('id')
    .where('cause_type', '=', 'agent_write')
    .where('cause_id', '=', writeId)
    .execute();
const entryRowsOf = (writeId: string) =>
  h.db
    .selectFrom('ledger_entries')
    .select(['id', 'memo', 'counterparty', 'kind', 'origin'])
    .where('cause_type', '=', 'agent_write')
    .where('cause_id', '=', writeId)
    .execute();
const eventsOf = async (spaceId: string, event: 'money.in' | 'money.out') =>
  (
    await h.db
      .selectFrom('outbox_events')
      .select('payload')
      .where('space_id', '=', spaceId)
      .where('event', '=', event)
      .execute()
  ).map((row) => row.payload as Body);
const moneyOutsOf = (spaceId: string) => eventsOf(spaceId, 'money.out');
const spentOf = async (agentId: string) =>
  formatAmount(
    readAmount(
      (
        await h.db
          .selectFrom('agents')
          .select('spent_usd')
          .where('id', '=', agentId)
          .executeTakeFirstOrThrow()
      ).spent_usd,
    ),
  );

/** Lets a short authorization expire: real time passes (other files' payments rely on the chain's clock), then a block is mined. */
async function passChainTime(seconds: number) {
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'evm_mine', params: [] });
  await fetch(chain.local!.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
}

describe('the repair of agent writes left on their way', () => {
  it('books a transfer left in sending whose authorization was mined, once, however often it runs', async () => {
    const world = await agentWorld();
    const { writeId, to, signed } = await leftOnItsWay(world);
    const hash = await broadcast(signed);
    // Within the grace period the live process may still be at work: nothing is touched.
    expect(await repairAgentWrites({ ...repairDeps(), clock: systemClock })).toMatchObject({ booked: 0 });
    expect((await writeOf(writeId)).status).toBe('sending');
    const first = await repairAgentWrites(repairDeps());
    expect(first.booked).toBeGreaterThanOrEqual(1);
    const row = await writeOf(writeId);
    expect(row.status).toBe('applied');
    expect(row.result).toMatchObject({
      amount: '2.00000000',
      destination: getAddress(to),
      tx_hash: hash,
      repaired: true,
    });
    await repairAgentWrites(repairDeps());
    expect(await entriesOf(writeId)).toHaveLength(1);
    const outs = await moneyOutsOf(world.spaceId);
    expect(outs).toHaveLength(1);
    expect(outs[0]).toMatchObject({
      amount: '2.00000000',
      transaction_id: row.result!.transaction_id,
    });
    // The day's cap keeps the spend: the money did move.
    expect(await spentOf(world.agentId)).toBe('2.00000000');
    expect(await usdcOf(to)).toBe(2_000_000n);
  });

  it('waits while an unsent authorization is valid, then releases it and gives the spend back', async () => {
    const world = await agentWorld();
    const { writeId } = await leftOnItsWay(world, { validSeconds: SHORT_VALIDITY_SECONDS });
    await repairAgentWrites(repairDeps());
    expect((await writeOf(writeId)).status).toBe('sending');
    await passChainTime(SHORT_VALIDITY_SECONDS + 1);
    await repairAgentWrites(repairDeps());
    const row = await writeOf(writeId);
    expect(row.status).toBe('failed');
    expect(row.result).toMatchObject({ error: 'transfer_failed', repaired: true });
    expect(String(row.result!.detail)).toContain('expired unused');
    expect(await spentOf(world.agentId)).toBe('0.00000000');
    const spends = await h.db
      .selectFrom('agent_spend')
      .select('id')
      .where('write_id', '=', writeId)
      .execute();
    expect(spends).toHaveLength(0);
    expect(await entriesOf(writeId)).toHaveLength(0);
  });

  it('releases a write whose process died before signing, and the late process can no longer send', async () => {
    const world = await agentWorld();
    const { writeId, signed } = await leftOnItsWay(world, { signed: false });
    await repairAgentWrites(repairDeps());
    expect((await writeOf(writeId)).status).toBe('failed');
    expect(await spentOf(world.agentId)).toBe('0.00000000');
    const late = await recordMessage(writeId, signed.message);
    expect(late).toBe(false);
  });

  it('leaves to an operator a write that was already stuck when the repair came (nothing recorded)', async () => {
    const world = await agentWorld();
    const { writeId } = await leftOnItsWay(world, { signed: false });
    await h.db
      .updateTable('agent_writes')
      .set({ in_flight_before_repair: true })
      .where('id', '=', writeId)
      .execute();
    await repairAgentWrites(repairDeps());
    expect((await writeOf(writeId)).status).toBe('sending');
    expect(await spentOf(world.agentId)).toBe('2.00000000');
  });

  it('approves a claimed wallet-transfer proposal that landed, and gives back one that expired', async () => {
    const world = await agentWorld();
    const landed = await leftOnItsWay(world, { status: 'approving' });
    await broadcast(landed.signed);
    const expired = await leftOnItsWay(world, { status: 'approving', validSeconds: SHORT_VALIDITY_SECONDS });
    await passChainTime(SHORT_VALIDITY_SECONDS + 1);
    await repairAgentWrites(repairDeps());
    const approved = await writeOf(landed.writeId);
    expect(approved.status).toBe('approved');
    expect(approved.decided_by).toBe(world.owner.id);
    expect(await entriesOf(landed.writeId)).toHaveLength(1);
    const back = await writeOf(expired.writeId);
    expect(back).toMatchObject({ status: 'pending', decided_by: null, signed_nonce: null });
    expect(back.result).toMatchObject({ error: 'transfer_failed', repaired: true });
    expect(await entriesOf(expired.writeId)).toHaveLength(0);
  });

  it('marks an x402 payment left in sending applied when its authorization was used', async () => {
    const world = await agentWorld();
    const { writeId, signed } = await leftOnItsWay(world, { kind: 'x402' });
    const hash = await broadcast(signed);
    await repairAgentWrites(repairDeps());
    const row = await writeOf(writeId);
    expect(row.status).toBe('applied');
    expect(row.result).toMatchObject({
      paid: { amount: '2.00000000', asset: 'USDC', network: 'local', tx_hash: hash },
      repaired: true,
    });
    expect(await spentOf(world.agentId)).toBe('2.00000000');
    // Booked as the wallet transfer is: money.out on the wallet's account, once however often
    // the repair runs, the entry naming the write and the transaction.
    await repairAgentWrites(repairDeps());
    const entries = await entryRowsOf(writeId);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      memo: hash,
      counterparty: 'paid.example',
      kind: 'expense',
      origin: 'rail',
    });
    expect(row.result!.transaction_id).toBe(entries[0]!.id);
    expect(await moneyOutsOf(world.spaceId)).toEqual([
      expect.objectContaining({ amount: '2.00000000', transaction_id: entries[0]!.id }),
    ]);
    const approving = await leftOnItsWay(world, { kind: 'x402', status: 'approving' });
    await broadcast(approving.signed);
    await repairAgentWrites(repairDeps());
    await repairAgentWrites(repairDeps());
    expect((await writeOf(approving.writeId)).status).toBe('approved');
    expect(await entriesOf(approving.writeId)).toHaveLength(1);
    expect((await checkLedger(h.db, world.spaceId)).sound).toBe(true);
  });

  it('books once when two workers repair at the same time', async () => {
    const world = await agentWorld();
    const writes = [];
    for (let i = 0; i < 3; i++) {
      const left = await leftOnItsWay(world);
      await broadcast(left.signed);
      writes.push(left.writeId);
    }
    const [a, b] = await Promise.all([repairAgentWrites(repairDeps()), repairAgentWrites(repairDeps())]);
    expect(a.booked + b.booked).toBeGreaterThanOrEqual(3);
    for (const writeId of writes) {
      expect((await writeOf(writeId)).status).toBe('applied');
      expect(await entriesOf(writeId)).toHaveLength(1);
    }
    expect(await moneyOutsOf(world.spaceId)).toHaveLength(3);
  });
});

/**
 * An x402 host that quotes 1 USDC valid for a few seconds, keeps the signed payment it is sent and
 * answers 503 without settling it: the agent cannot know whether it will ever be settled. With
 * `settles`, it settles the payment on chain at once and answers 200 with the settlement.
 */
async function keepingHost(options: { settles?: boolean } = {}) {
  const payTo = privateKeyToAccount(generatePrivateKey()).address;
  const kept: Body[] = [];
  const server = createServer(async (req, res) => {
    const header = req.headers['payment-signature'];
    if (typeof header === 'string') {
      const payment = decodePaymentSignatureHeader(header) as Body;
      kept.push(payment);
      if (options.settles) {
        // A host that settles at once: it puts the authorization on chain and says so.
        const signed = keptAuthorization(payment);
        const transaction = await broadcast(signed);
        const settled = encodePaymentResponseHeader({
          success: true,
          transaction,
          network: chain.local!.network.caip2 as `${string}:${string}`,
          payer: signed.message.from,
        });
        res.writeHead(200, { 'content-type': 'text/plain', 'payment-response': settled }).end('the report');
        return;
      }
      res.writeHead(503, { 'content-type': 'text/plain' }).end('busy, try later');
      return;
    }
    const required = {
      x402Version: 2,
      error: 'payment required',
      resource: {
        url: `http://${req.headers.host}${req.url}`,
        description: 'report',
        mimeType: 'text/plain',
      },
      accepts: [
        {
          scheme: 'exact',
          network: chain.local!.network.caip2,
          asset: token().address,
          amount: '1000000',
          payTo,
          maxTimeoutSeconds: SHORT_VALIDITY_SECONDS,
          extra: { name: token().name, version: token().version },
        },
      ],
    };
    res.writeHead(402, { 'payment-required': encodePaymentRequiredHeader(required as never) }).end('{}');
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    host: `127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}/report`,
    kept,
    payTo,
    close: () => server.close(),
  };
}

/** The authorization a host kept, as the test's broadcast takes it. */
function keptAuthorization(payment: Body) {
  const authorization = payment.payload.authorization;
  return {
    message: {
      from: authorization.from as Address,
      to: authorization.to as Address,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce as Hex,
    },
    signature: payment.payload.signature as Hex,
  };
}

describe('an x402 payment whose outcome the agent cannot know', () => {
  async function paidToKeepingHost() {
    const host = await keepingHost();
    const world = await agentWorld(10_000_000n, [host.host]);
    const res = await api('POST', '/agent/x402', world.token, { url: host.url });
    expect(res.body).toMatchObject({
      applied: true,
      result: { status: 503, paid: null, payment_pending: true },
    });
    expect(host.kept).toHaveLength(1);
    const write = await h.db
      .selectFrom('agent_writes')
      .selectAll()
      .where('agent_id', '=', world.agentId)
      .where('kind', '=', 'x402')
      .executeTakeFirstOrThrow();
    expect(write).toMatchObject({ status: 'sending', signed_network: 'local', signed_value: '1000000' });
    expect(write.signed_nonce).toBe(String(host.kept[0]!.payload.authorization.nonce).toLowerCase());
    expect(await spentOf(world.agentId)).toBe('1.00000000');
    return { host, world, write };
  }

  it('stays reserved until the authorization expires unused, then is released', async () => {
    const { host, world, write } = await paidToKeepingHost();
    await passChainTime(SHORT_VALIDITY_SECONDS + 1);
    await repairAgentWrites(repairDeps());
    expect((await writeOf(write.id)).status).toBe('failed');
    expect(await spentOf(world.agentId)).toBe('0.00000000');
    host.close();
  });

  it('is applied with what was paid when the host settles it later', async () => {
    const { host, world, write } = await paidToKeepingHost();
    const hash = await broadcast(keptAuthorization(host.kept[0]!));
    expect(await usdcOf(host.payTo)).toBe(1_000_000n);
    await repairAgentWrites(repairDeps());
    const row = await writeOf(write.id);
    expect(row.status).toBe('applied');
    expect(row.result).toMatchObject({ status: 503, paid: { amount: '1.00000000', tx_hash: hash } });
    expect(await spentOf(world.agentId)).toBe('1.00000000');
    host.close();
  });
});

describe('the agent wallet watched as a proven account', () => {
  it('books its funding once and agrees with GET /agent/wallet after spending', async () => {
    const world = await agentWorld(0n);
    const funder = privateKeyToAccount(generatePrivateKey());
    await chain.local!.fund(funder.address, 10_000_000n, 10n ** 17n);
    const w = { local: chain.local!, token: token() } as unknown as X402World;
    await sendTokenTransfer(w, funder, world.wallet as Address, 6_000_000n);
    const watch = { db: h.db, clock: systemClock, chain, confirmations: { local: 0 } };
    await watchOnce(watch);
    await watchOnce(watch);
    const accounts = await h.db
      .selectFrom('accounts')
      .selectAll()
      .where('space_id', '=', world.spaceId)
      .where('address', '=', world.wallet.toLowerCase())
      .execute();
    expect(accounts).toHaveLength(1);
    expect(accounts[0]!.address_proven).toBe(world.wallet.toLowerCase());
    const ins = await eventsOf(world.spaceId, 'money.in');
    expect(ins).toHaveLength(1);
    expect(ins[0]).toMatchObject({ amount: '6.00000000', account_id: accounts[0]!.id });
    const sent = await api('POST', '/agent/wallet/transfers', world.token, {
      chain: 'evm',
      asset: 'USDC',
      network: 'local',
      payee: 'Acme Supplies',
      amount: '2.5',
      destination: privateKeyToAccount(generatePrivateKey()).address,
    });
    expect(sent.body).toMatchObject({ applied: true });
    expect(sent.body.result.account_id).toBe(accounts[0]!.id);
    // The transfer out is not income of the wallet: the watch books nothing more.
    await watchOnce(watch);
    const onChain = await api('GET', '/agent/wallet', world.token);
    expect(onChain.body.balances).toEqual([
      { network: 'local', asset: 'USDC', amount: '3.50000000', native: '0.00000000' },
    ]);
    const listed = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${world.spaceId}/accounts`,
      session: world.owner.token,
    });
    const account = (listed.json().items as Body[]).find((item) => item.id === accounts[0]!.id);
    expect(account).toMatchObject({ balance: '3.50000000', address_proven: true });
  });

  /** An agent whose wallet a third party funded with 6 USDC, the funding booked by the watch. */
  async function fundedAndWatched(hosts: string[]) {
    const world = await agentWorld(0n, hosts);
    const funder = privateKeyToAccount(generatePrivateKey());
    await chain.local!.fund(funder.address, 10_000_000n, 10n ** 17n);
    const w = { local: chain.local!, token: token() } as unknown as X402World;
    await sendTokenTransfer(w, funder, world.wallet as Address, 6_000_000n);
    const watch = { db: h.db, clock: systemClock, chain, confirmations: { local: 0 } };
    await watchOnce(watch);
    return { world, watch };
  }

  /** The wallet's balance as the chain tells it and as the book tells it (its account's balance). */
  async function bothBalances(world: World) {
    const onChain = await api('GET', '/agent/wallet', world.token);
    const listed = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${world.spaceId}/accounts`,
      session: world.owner.token,
    });
    const address = world.wallet.toLowerCase();
    const account = (listed.json().items as Body[]).find((item) => item.address?.toLowerCase() === address);
    return { chain: onChain.body.balances[0].amount as string, book: account?.balance as string };
  }

  it('books an x402 payment from the wallet once as money.out, and the book agrees with the chain', async () => {
    const host = await keepingHost({ settles: true });
    const { world, watch } = await fundedAndWatched([host.host]);
    const res = await api('POST', '/agent/x402', world.token, { url: host.url });
    expect(res.body, JSON.stringify(res.body)).toMatchObject({
      applied: true,
      result: { status: 200, paid: { amount: '1.00000000', asset: 'USDC', network: 'local' } },
    });
    const txHash = res.body.result.paid.tx_hash as string;
    const write = await h.db
      .selectFrom('agent_writes')
      .selectAll()
      .where('agent_id', '=', world.agentId)
      .executeTakeFirstOrThrow();
    expect(write.status).toBe('applied');
    const agentRow = await agentStore.walletOf(h.db, world.agentId);
    const entries = await entryRowsOf(write.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      memo: txHash,
      counterparty: host.host,
      kind: 'expense',
      origin: 'rail',
    });
    expect(await moneyOutsOf(world.spaceId)).toEqual([
      expect.objectContaining({ amount: '1.00000000', transaction_id: entries[0]!.id }),
    ]);
    // A late finish of the same write (a second process, or the live path after the repair)
    // meets a write no longer on its way: its statement books nothing.
    const network = chain.local!.network;
    const account = await readyWalletAccount(h.db, { clock: systemClock }, agentRow, network);
    const late = await bookWalletOutIf(
      h.db,
      { clock: systemClock },
      agentRow,
      {
        out: { network, amount: asAmount(1_00000000n) },
        proof: { writeId: write.id, txHash, payee: '' },
        account,
      },
      agentStore.appliedIfSending(write.id, {}),
    );
    expect(late).toBeUndefined();
    // Nothing is left for the repair, and the watch books nothing more for the payment.
    await repairAgentWrites(repairDeps());
    await watchOnce(watch);
    expect(await entriesOf(write.id)).toHaveLength(1);
    expect(await bothBalances(world)).toEqual({ chain: '5.00000000', book: '5.00000000' });
    expect((await checkLedger(h.db, world.spaceId)).sound).toBe(true);
    host.close();
  });

  it('books an approved x402 proposal once, and the book agrees with the chain', async () => {
    const host = await keepingHost({ settles: true });
    // The host is outside the fence: the fetch is a proposal, and the owner approves it.
    const { world } = await fundedAndWatched([]);
    const proposed = await api('POST', '/agent/x402', world.token, { url: host.url });
    expect(proposed.body).toMatchObject({ applied: false });
    const approve = () =>
      api(
        'POST',
        `/app/api/spaces/${world.spaceId}/proposals/${proposed.body.proposal_id}/approve`,
        world.owner.token,
        {},
      );
    const approved = await approve();
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', result: { paid: { amount: '1.00000000' } } });
    const again = await approve();
    expect(again.body.error).toBe('proposal_state');
    const entries = await entryRowsOf(proposed.body.proposal_id);
    expect(entries).toHaveLength(1);
    expect(entries[0]!.memo).toBe(approved.body.result.paid.tx_hash);
    expect(await moneyOutsOf(world.spaceId)).toHaveLength(1);
    expect(await bothBalances(world)).toEqual({ chain: '5.00000000', book: '5.00000000' });
    expect((await checkLedger(h.db, world.spaceId)).sound).toBe(true);
    host.close();
  });
});

describe('the repair of agent writes behind a failing node', () => {
  let proxy: RpcFaultProxy;
  let faultyChain: Chain;
  beforeAll(async () => {
    proxy = await startRpcFaultProxy(chain.local!.rpcUrl);
    // The repair's reads go through the proxy, with a short timeout so a held request ends soon.
    const proxied = connectClients(networkDefinition('local'), [proxy.url], [], 500);
    faultyChain = { ...chain, clients: (name) => (name === 'local' ? proxied : chain.clients(name)) };
  });
  afterAll(async () => {
    await proxy?.close();
  });

  const unknownCount = async () =>
    (await chainUnknownTotal.get()).values
      .filter((value) => value.labels.network === 'local')
      .reduce((sum, value) => sum + value.value, 0);

  /** What a repair may change about one write: its row, its entries, its events and the spend. */
  const stateOf = async (world: World, writeId: string) => {
    const { status, result } = await writeOf(writeId);
    return {
      status,
      result,
      entries: await entriesOf(writeId),
      outs: await moneyOutsOf(world.spaceId),
      spent: await spentOf(world.agentId),
    };
  };

  // Each stage of the repair's reading: the node's head, the block and the nonce's state at it,
  // and the log naming the transaction that used the nonce.
  const STAGES = [['eth_blockNumber'], ['eth_getBlockByNumber', 'eth_call'], ['eth_getLogs']];

  for (const { name, fault } of FAILING_FAULTS) {
    it(`changes nothing while the node answers ${name}, then books the mined transfer once`, async () => {
      const world = await agentWorld();
      const { writeId, signed } = await leftOnItsWay(world);
      const hash = await broadcast(signed);
      const deps = { ...repairDeps(), chain: faultyChain };
      const before = await stateOf(world, writeId);
      expect(before.status).toBe('sending');
      for (const methods of STAGES) {
        const counted = await unknownCount();
        for (const method of methods) proxy.inject(method, fault);
        try {
          await repairAgentWrites(deps);
        } finally {
          proxy.clear();
        }
        expect(await unknownCount(), methods.join(', ')).toBeGreaterThan(counted);
        expect(await stateOf(world, writeId), methods.join(', ')).toEqual(before);
      }
      // The node answers again: the repair books the write once, however often it runs.
      await repairAgentWrites(deps);
      await repairAgentWrites(deps);
      const after = await stateOf(world, writeId);
      expect(after.status).toBe('applied');
      expect(after.result).toMatchObject({ tx_hash: hash, repaired: true });
      expect(after.entries).toHaveLength(1);
      expect(after.outs).toHaveLength(1);
      expect(after.spent).toBe('2.00000000');
      expect((await checkLedger(h.db, world.spaceId)).sound).toBe(true);
    }, 60_000);
  }

  it('answers GET /agent/wallet 503, never a zero balance, while the node cannot be asked', async () => {
    const world = await agentWorld(3_000_000n);
    const caller = { agentId: world.agentId, spaceId: world.spaceId } as never;
    const deps = { db: h.db, chain: faultyChain } as never;
    const counted = await unknownCount();
    proxy.inject('eth_call', FAULTS.rateLimited);
    try {
      await expect(walletBalances(deps, caller)).rejects.toMatchObject({ code: 'service_unavailable' });
    } finally {
      proxy.clear();
    }
    expect(await unknownCount()).toBeGreaterThan(counted);
    const read = await walletBalances(deps, caller);
    expect(read.balances.find((balance) => balance.network === 'local')).toMatchObject({
      amount: '3.00000000',
    });
  }, 60_000);

  it('releases nothing while the node cannot be asked about an expired authorization, then releases it once', async () => {
    const world = await agentWorld();
    const { writeId } = await leftOnItsWay(world, { validSeconds: SHORT_VALIDITY_SECONDS });
    await passChainTime(SHORT_VALIDITY_SECONDS + 1);
    const deps = { ...repairDeps(), chain: faultyChain };
    const before = await stateOf(world, writeId);
    const counted = await unknownCount();
    proxy.inject('eth_call', FAULTS.rateLimited);
    try {
      await repairAgentWrites(deps);
    } finally {
      proxy.clear();
    }
    expect(await unknownCount()).toBeGreaterThan(counted);
    expect(await stateOf(world, writeId)).toEqual(before);
    await repairAgentWrites(deps);
    await repairAgentWrites(deps);
    const after = await stateOf(world, writeId);
    expect(after.status).toBe('failed');
    expect(after.entries).toHaveLength(0);
    expect(after.outs).toHaveLength(0);
    expect(after.spent).toBe('0.00000000');
  }, 60_000);
});
