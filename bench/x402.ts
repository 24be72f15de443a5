// Issue 5's benchmark: what Tollbook adds to an on-chain x402 payment.
//
// In one run, against one anvil (started by the server, as `npm start` does):
// 1. direct: a plain `transferWithAuthorization` sent with viem by a funded relayer, timed from
//    send to receipt (anvil mines on arrival);
// 2. tollbook: the full machine path on a payment page: GET pay_url (402 + quote), the official
//    x402 client signs (its time is subtracted), GET pay_url with PAYMENT-SIGNATURE → the server
//    verifies, claims, settles on chain, waits for the receipt, books, answers 200.
// 3. checks: what @x402/evm's exact scheme itself does before any facilitator may broadcast
//    (the payer's code, the EIP-712 signature, a simulation of the transfer), called directly in
//    this process with no HTTP and no database, on an authorization for a fresh request.
// The three are interleaved, one payment at a time, so drift hits them alike. Target (issue 16):
// what Tollbook adds beyond the scheme's own checks, median(2) - median(1) - median(3), is at
// most 5 ms. (The older target, median(2) - median(1) <= 5 ms, is retired: (3) alone, which (1)
// does not do, takes about that long.)

import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { toClientEvmSigner, toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import {
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  parseAbi,
  parseSignature,
  toHex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startAnvil } from '../src/platform/chain/anvil.ts';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../src/platform/chain/token.ts';
import { FAULTS, startRpcFaultProxy } from '../test/fixtures/rpc-fault-proxy.ts';
import {
  type BenchContext,
  type BenchReport,
  emptyReport,
  fmt,
  latencyRow,
  latencySummary,
  postJson,
  processCpuMs,
  type ServerHandle,
  withFreshServer,
} from './lib.ts';
import { benchX402Credit } from './x402-credit.ts';

const BENCH = 'x402';
const DATABASE = 'tollbook_bench_x402';
const ROUNDS = Number(process.env.BENCH_X402_ROUNDS ?? 60);
const WARMUP_ROUNDS = 5;
const TARGET_ADDED_MS = 5;
/** BENCH_X402_SECTIONS=lanes (say) runs only the named parts: pay, credit and lanes. */
const SECTIONS = (process.env.BENCH_X402_SECTIONS ?? 'pay,credit,lanes').split(',');

const TOKEN_ABI = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function name() view returns (string)',
  'function version() view returns (string)',
]);

type Setup = Awaited<ReturnType<typeof prepare>>;

async function prepare(server: ServerHandle & { key: string }) {
  const accounts = await fetch(`${server.baseUrl}/integration/accounts`, {
    headers: { authorization: `Bearer ${server.key}` },
  }).then((res) => res.json() as Promise<{ items: { id: string; kind: string; address: string }[] }>);
  const wallet = accounts.items.find((account) => account.kind === 'crypto');
  if (!wallet) throw new Error('The demo space has no crypto account (is the local chain on?).');
  const payer = privateKeyToAccount(generatePrivateKey());
  const relayer = privateKeyToAccount(generatePrivateKey());
  const funded = await postJson(server.baseUrl, server.key, '/dev/faucet', {
    address: payer.address,
    usdc: '1000000',
  });
  await postJson(server.baseUrl, server.key, '/dev/faucet', { address: relayer.address, usdc: '1' });
  if (funded.status !== 200) throw new Error(`Faucet: ${JSON.stringify(funded.json)}`);
  const rpcUrl = String(funded.json.rpc_url);
  const asset = funded.json.asset as Address;
  const chain = defineChain({
    id: 31337,
    name: 'local',
    nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const publicClient = createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 100 });
  const relay = createWalletClient({ chain, transport: http(rpcUrl), account: relayer });
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: toClientEvmSigner(payer, publicClient as never) });
  client.setSpendControls({ allowedAssets: [{ network: 'eip155:31337', asset }] });
  const name = await publicClient.readContract({ address: asset, abi: TOKEN_ABI, functionName: 'name' });
  const version = await publicClient.readContract({
    address: asset,
    abi: TOKEN_ABI,
    functionName: 'version',
  });
  // The scheme as a facilitator runs it; verification only reads, so the relay stands in as signer.
  const checker = new ExactEvmScheme(
    toFacilitatorEvmSigner({
      address: relayer.address,
      readContract: (args) => publicClient.readContract(args as never),
      verifyTypedData: (args) => publicClient.verifyTypedData(args as never),
      writeContract: (args) => relay.writeContract(args as never),
      sendTransaction: (args) => relay.sendTransaction(args as never),
      waitForTransactionReceipt: (args) => publicClient.waitForTransactionReceipt(args),
      getCode: (args) => publicClient.getCode(args),
    }),
  );
  return { server, wallet, payer, asset, publicClient, relay, client, checker, domain: { name, version } };
}

/** One direct transfer: signed beforehand, timed from send to receipt. */
async function directRound(setup: Setup): Promise<number> {
  const now = Math.floor(Date.now() / 1000);
  const message = {
    from: setup.payer.address,
    to: setup.wallet.address as Address,
    value: 1_000_000n,
    validAfter: BigInt(now - 60),
    validBefore: BigInt(now + 600),
    nonce: toHex(randomBytes(32)) as Hex,
  };
  const signature = await setup.payer.signTypedData({
    domain: { ...setup.domain, chainId: 31337, verifyingContract: setup.asset },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  const { v, r, s } = parseSignature(signature);
  const started = performance.now();
  const hash = await setup.relay.writeContract({
    address: setup.asset,
    abi: TOKEN_ABI,
    functionName: 'transferWithAuthorization',
    args: [
      message.from,
      message.to,
      message.value,
      message.validAfter,
      message.validBefore,
      message.nonce,
      Number(v),
      r,
      s,
    ],
  });
  const receipt = await setup.publicClient.waitForTransactionReceipt({ hash });
  const elapsed = performance.now() - started;
  if (receipt.status !== 'success') throw new Error(`Direct transfer ${hash} failed.`);
  return elapsed;
}

async function mint(setup: Setup): Promise<string> {
  const minted = await postJson(setup.server.baseUrl, setup.server.key, '/integration/payment-requests', {
    account_id: setup.wallet.id,
    amount: '1',
  });
  if (minted.status !== 201) throw new Error(`Mint: ${JSON.stringify(minted.json)}`);
  return String(minted.json.url);
}

/** The scheme's own checks of an authorization for a fresh request; minting, quote and signing untimed. */
async function checksRound(setup: Setup): Promise<number> {
  const quote = await fetch(await mint(setup), { headers: { accept: 'application/json' } });
  await quote.arrayBuffer();
  const payload = await setup.client.createPaymentPayload(
    decodePaymentRequiredHeader(quote.headers.get('payment-required')!),
  );
  const started = performance.now();
  const verdict = await setup.checker.verify(payload, payload.accepted);
  const elapsed = performance.now() - started;
  if (!verdict.isValid) throw new Error(`The scheme refused the authorization: ${verdict.invalidReason}`);
  return elapsed;
}

/** One Tollbook payment: mint (untimed), then 402 → sign (subtracted) → pay → 200. */
async function tollbookRound(setup: Setup): Promise<number> {
  const url = await mint(setup);
  const started = performance.now();
  const quote = await fetch(url, { headers: { accept: 'application/json' } });
  await quote.arrayBuffer();
  if (quote.status !== 402) throw new Error(`Quote answered ${quote.status}.`);
  const signStarted = performance.now();
  const required = decodePaymentRequiredHeader(quote.headers.get('payment-required')!);
  const payload = await setup.client.createPaymentPayload(required);
  const header = encodePaymentSignatureHeader(payload);
  const signMs = performance.now() - signStarted;
  const cpuBefore = processCpuMs(setup.server.pid);
  const paid = await fetch(url, { headers: { accept: 'application/json', 'payment-signature': header } });
  const body = await paid.text();
  const elapsed = performance.now() - started - signMs;
  const cpuAfter = processCpuMs(setup.server.pid);
  if (cpuBefore !== null && cpuAfter !== null) paidGetCpuMs.push(cpuAfter - cpuBefore);
  if (paid.status !== 200) throw new Error(`Payment answered ${paid.status}: ${body.slice(0, 300)}`);
  return elapsed;
}

/** The server's CPU time (user and system, in clock ticks of 10 ms) over each timed paid GET. */
const paidGetCpuMs: number[] = [];

export async function benchX402(ctx: BenchContext): Promise<BenchReport> {
  const report = SECTIONS.some((name) => name === 'pay' || name === 'credit')
    ? await benchX402Pay(ctx)
    : emptyReport();
  if (SECTIONS.includes('lanes')) await benchX402Lanes(ctx, report);
  return report;
}

async function benchX402Pay(ctx: BenchContext): Promise<BenchReport> {
  ctx.log(`x402: ${ROUNDS} payments each way, interleaved, on the server's own anvil (PostgreSQL database)`);
  const report = await withFreshServer(
    ctx,
    BENCH,
    DATABASE,
    async (server, _databaseUrl, report) => {
      if (SECTIONS.includes('credit') && !SECTIONS.includes('pay')) {
        await benchX402Credit(ctx, server, report);
        return;
      }
      const setup = await prepare(server);
      for (let round = 0; round < WARMUP_ROUNDS; round++) {
        await directRound(setup);
        await tollbookRound(setup);
        await checksRound(setup);
      }
      const direct: number[] = [];
      const tollbook: number[] = [];
      const checks: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        direct.push(await directRound(setup));
        tollbook.push(await tollbookRound(setup));
        checks.push(await checksRound(setup));
      }
      const cpuSamples = paidGetCpuMs.splice(0).slice(-ROUNDS);
      if (cpuSamples.length > 0)
        ctx.log(
          `    server CPU over the paid GET (mean of ${cpuSamples.length}, /proc ticks): ` +
            `${fmt(cpuSamples.reduce((sum, value) => sum + value, 0) / cpuSamples.length, 1)} ms`,
        );
      const d = latencySummary(direct);
      const t = latencySummary(tollbook);
      const c = latencySummary(checks);
      const added = t.p50 - d.p50;
      ctx.log(
        `    direct transferWithAuthorization, send → receipt:  p50 ${fmt(d.p50, 2)} ms, p90 ${fmt(d.p90, 2)} ms, p99 ${fmt(d.p99, 2)} ms`,
      );
      ctx.log(
        `    Tollbook 402 → verify → settle → 200 (no signing): p50 ${fmt(t.p50, 2)} ms, p90 ${fmt(t.p90, 2)} ms, p99 ${fmt(t.p99, 2)} ms`,
      );
      ctx.log(
        `    of which @x402/evm's own checks (code, signature, simulation; no HTTP, no database): p50 ${fmt(c.p50, 2)} ms, p90 ${fmt(c.p90, 2)} ms`,
      );
      ctx.log(
        `    added by Tollbook over a direct transfer (median): ${fmt(added, 2)} ms (retired target, not judged)`,
      );
      for (const [route, values] of [
        ['direct transferWithAuthorization', d],
        ['tollbook pay page', t],
        ['@x402/evm exact verify alone', c],
      ] as const) {
        report.rows.push(latencyRow(BENCH, route, values));
      }
      // Issue 16: what Tollbook adds beyond @x402/evm's own checks is the target; the old figure
      // (added over a direct transfer, the checks included) is printed but no longer judged.
      const beyond = added - c.p50;
      ctx.log(
        `    target: added beyond the scheme's checks ${fmt(beyond, 2)} ms = (${fmt(t.p50, 2)} - ${fmt(d.p50, 2)}) - ${fmt(c.p50, 2)}   ` +
          `target <= ${TARGET_ADDED_MS} ms   ${beyond <= TARGET_ADDED_MS ? 'PASS' : 'FAIL'}`,
      );
      report.targets.push({
        bench: BENCH,
        config: 'postgres',
        what: "median ms added beyond the scheme's checks",
        value: beyond,
        target: TARGET_ADDED_MS,
        pass: beyond <= TARGET_ADDED_MS,
        atMost: true,
        contaminated: false,
      });
      if (SECTIONS.includes('credit')) await benchX402Credit(ctx, server, report);
    },
    { CHAIN: '1' },
  );
  return report;
}

// Gas wallet lanes: settlements a second with 1 lane and with 4, at LANE_PAYERS concurrent payers
// (each a payment on its own request, quoted and signed beforehand; timed from the first payment
// sent to the last answered). Target: 4 lanes settle at least 3 × as many a second as 1 lane.
// Anvil answers in about a millisecond, where a real node takes 50–300 ms: a lane would never
// wait on the node, and the server's CPU would be measured instead. So the server reaches anvil
// (started here) through the JSON-RPC proxy of the tests, which delays every request by
// LANE_NODE_DELAY_MS during the timed part (setup runs undelayed).
const LANE_PAYERS = 50;
const LANE_PAYMENTS = Number(process.env.BENCH_X402_LANE_PAYMENTS ?? 200);
const LANE_TARGET_RATIO = 3;
const LANE_NODE_DELAY_MS = Number(process.env.BENCH_X402_NODE_DELAY_MS ?? 150);
/** Anvil's first development key: one lane (the default local chain has four). */
const ONE_LANE_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

type LaneFigures = { rate: number; serverCpuMs: number | null; sends: number; peakSends: number };

/** Settlements a second through one server at LANE_PAYERS concurrent payers. */
async function laneRound(setup: Setup, node: { delay(): void; peakSends(): number }): Promise<LaneFigures> {
  const signed = await Promise.all(
    Array.from({ length: LANE_PAYMENTS }, async () => {
      const url = await mint(setup);
      const quote = await fetch(url, { headers: { accept: 'application/json' } });
      await quote.arrayBuffer();
      const payload = await setup.client.createPaymentPayload(
        decodePaymentRequiredHeader(quote.headers.get('payment-required')!),
      );
      return { url, header: encodePaymentSignatureHeader(payload) };
    }),
  );
  let next = 0;
  const payer = async () => {
    while (next < signed.length) {
      const { url, header } = signed[next++]!;
      const paid = await fetch(url, { headers: { accept: 'application/json', 'payment-signature': header } });
      const body = await paid.text();
      if (paid.status !== 200) throw new Error(`Payment answered ${paid.status}: ${body.slice(0, 300)}`);
    }
  };
  node.delay();
  const cpuBefore = processCpuMs(setup.server.pid);
  const started = performance.now();
  await Promise.all(Array.from({ length: LANE_PAYERS }, payer));
  const elapsed = performance.now() - started;
  const cpuAfter = processCpuMs(setup.server.pid);
  return {
    rate: (LANE_PAYMENTS * 1000) / elapsed,
    serverCpuMs: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore,
    sends: LANE_PAYMENTS,
    peakSends: node.peakSends(),
  };
}

/** The lanes' figures, added to `into` (the x402 bench's report). */
export async function benchX402Lanes(ctx: BenchContext, into: BenchReport): Promise<void> {
  const rates: Record<string, number> = {};
  for (const [lanes, env] of [
    ['1 lane', { GAS_WALLET_KEYS: ONE_LANE_KEY }],
    ['4 lanes', {}],
  ] as const) {
    ctx.log(
      `x402 lanes: ${LANE_PAYMENTS} payments at ${LANE_PAYERS} concurrent payers, ${lanes}, ` +
        `every node request delayed ${LANE_NODE_DELAY_MS} ms`,
    );
    const anvil = await startAnvil({ chainId: 31337 });
    const proxy = await startRpcFaultProxy(anvil.rpcUrl);
    // The most broadcasts the proxy held at one moment: how many lanes really sent at once.
    let peak = 0;
    const watchPeak = async () => {
      for (let count = 1; count <= 8; count++) {
        await proxy.inFlightReaches('eth_sendRawTransaction', count);
        peak = count;
      }
    };
    const node = {
      delay: () => {
        proxy.inject('*', FAULTS.delayed(LANE_NODE_DELAY_MS));
        void watchPeak();
      },
      peakSends: () => peak,
    };
    try {
      const report = await withFreshServer(
        ctx,
        BENCH,
        DATABASE,
        async (server) => {
          const figures = await laneRound(await prepare(server), node);
          rates[lanes] = figures.rate;
          ctx.log(
            `    ${lanes}: ${fmt(figures.rate, 1)} settlements/s; server CPU ` +
              `${figures.serverCpuMs === null ? '?' : fmt(figures.serverCpuMs / figures.sends, 1)} ms a settlement; ` +
              `at most ${figures.peakSends} broadcasts in flight at once`,
          );
          into.rows.push({
            bench: BENCH,
            config: 'postgres',
            route: `settlements, ${lanes}, ${LANE_PAYERS} payers, node ${LANE_NODE_DELAY_MS} ms`,
            rps: figures.rate,
            p50: 0,
            p99: 0,
            non2xx: 0,
            errors: 0,
            serverCpu: null,
            otherCpu: null,
          });
        },
        { CHAIN: '1', CHAIN_RPC_URL: proxy.url, ...env },
      );
      into.rows.push(...report.rows);
      into.failures.push(...report.failures);
    } finally {
      await proxy.close();
      await anvil.stop();
    }
  }
  const ratio = (rates['4 lanes'] ?? 0) / (rates['1 lane'] ?? 1);
  ctx.log(
    `    target: 4 lanes / 1 lane = ${fmt(ratio, 2)}   target >= ${LANE_TARGET_RATIO}   ${ratio >= LANE_TARGET_RATIO ? 'PASS' : 'FAIL'}`,
  );
  into.targets.push({
    bench: BENCH,
    config: 'postgres',
    what: `settlements a second, 4 lanes over 1 lane (node answers in ${LANE_NODE_DELAY_MS} ms)`,
    value: ratio,
    target: LANE_TARGET_RATIO,
    pass: ratio >= LANE_TARGET_RATIO,
    atMost: false,
    contaminated: false,
  });
}
