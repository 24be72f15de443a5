import { decodePaymentRequiredHeader } from '@x402/core/http';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnvilNode, startAnvil } from '../../src/platform/chain/anvil.ts';
import { createChain } from '../../src/platform/chain/chain.ts';
import { FAULTS, type RpcFaultProxy, startRpcFaultProxy } from '../fixtures/rpc-fault-proxy.ts';
import { CHAIN_START_TIMEOUT_MS } from './chain-setup.ts';
import { type Body, encodePayment, type Requirement, startX402World, type X402World } from './x402-setup.ts';

// Two gas wallet lanes broadcast at the same time. The app reaches anvil through the JSON-RPC
// proxy, which holds every eth_sendRawTransaction until released: two settlements on one lane
// would be sent one after the other, so the proxy could never hold two at once. Nothing here is
// timed; the test waits on the proxy's count of broadcasts in flight.

let anvil: AnvilNode;
let proxy: RpcFaultProxy;
let w: X402World;
beforeAll(async () => {
  anvil = await startAnvil({ chainId: 31337, startTimeoutMs: CHAIN_START_TIMEOUT_MS });
  proxy = await startRpcFaultProxy(anvil.rpcUrl);
  const chain = await createChain({
    local: true,
    localRpcUrl: proxy.url,
    logger: pino({ level: 'silent' }),
    startTimeoutMs: CHAIN_START_TIMEOUT_MS,
  });
  w = await startX402World({}, chain);
}, 240_000);
afterAll(async () => {
  await w?.close();
  await proxy?.close();
  await anvil?.stop();
});

const json = { accept: 'application/json' };

/** A fresh seller's request and a signed payment for it from a fresh funded payer. */
async function signedPayment() {
  const s = await w.seller();
  const request = await w.mint(s.key.key, '1.00', { account_id: s.account.id });
  const payer = await w.payer(5_000_000n);
  const quote = await fetch(request.url, { headers: json });
  const required = decodePaymentRequiredHeader(quote.headers.get('payment-required')!);
  return {
    request,
    payer,
    header: encodePayment(await w.authorize(payer, required.accepts[0] as Requirement)),
  };
}

const pay = async (url: string, header: string) => {
  const res = await fetch(url, { headers: { ...json, 'payment-signature': header } });
  return { status: res.status, body: (await res.json()) as Body };
};

describe('gas wallet lanes', () => {
  it('broadcast two settlements at once, each recorded before it was sent, from two lanes', async () => {
    const payments = [await signedPayment(), await signedPayment()];
    proxy.inject('eth_sendRawTransaction', FAULTS.held);
    let answers: Promise<Awaited<ReturnType<typeof pay>>[]> | undefined;
    try {
      answers = Promise.all(payments.map((payment) => pay(payment.request.url, payment.header)));
      // Resolves only once both broadcasts are at the node at the same moment.
      await proxy.inFlightReaches('eth_sendRawTransaction', 2);
      const held = await w.h.db
        .selectFrom('x402_broadcasts')
        .select(['lane', 'nonce', 'data'])
        .where('network', '=', w.local.network.caip2)
        .execute();
      const ours = payments.map((payment) => {
        const payer = payment.payer.address.slice(2).toLowerCase();
        return held.filter((row) => row.data.toLowerCase().includes(payer));
      });
      // Each held transaction was recorded before its broadcast; the two are on two lanes.
      expect(ours.map((rows) => rows.length)).toEqual([1, 1]);
      expect(ours[0]![0]!.lane).not.toBe(ours[1]![0]!.lane);
      expect(proxy.inFlight('eth_sendRawTransaction')).toBe(2);
    } finally {
      proxy.clear();
    }
    const paid = await answers;
    expect(paid.map((answer) => answer.status)).toEqual([200, 200]);
    expect(paid.map((answer) => answer.body.status)).toEqual(['paid', 'paid']);
  }, 120_000);
});
