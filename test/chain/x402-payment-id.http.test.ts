import type { Server } from 'node:http';
import type { FacilitatorClient } from '@x402/core/server';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toClientEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware } from '@x402/express';
import {
  appendPaymentIdentifierToExtensions,
  declarePaymentIdentifierExtension,
  generatePaymentId,
  isPaymentIdentifierExtension,
  PAYMENT_IDENTIFIER,
} from '@x402/extensions/payment-identifier';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client, x402HTTPClient } from '@x402/fetch';
import express from 'express';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import type { PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Chain, createChain } from '../../src/platform/chain/chain.ts';
import { buildChainApp, CHAIN_START_TIMEOUT_MS } from './chain-setup.ts';
import { type Body, encodePayment, freePort, startX402World, type X402World } from './x402-setup.ts';

// The payment-identifier extension with the official client and the extension's client helper:
// a payment carrying an id settles once per (pay-to, id) whatever process takes it; a repeat
// answers the first result; a different payment under the same id is refused.

const postgres = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== '';
const json = { accept: 'application/json' };

let w: X402World;
/** A second server on the same database and chain (PostgreSQL only: PGlite is one process's). */
let second: { chain: Chain; app: FastifyInstance; base: string } | undefined;
beforeAll(async () => {
  w = await startX402World();
  if (!postgres) return;
  const chain = await createChain({
    local: true,
    localRpcUrl: w.local.rpcUrl,
    logger: pino({ level: 'silent' }),
    startTimeoutMs: CHAIN_START_TIMEOUT_MS,
  });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const app = await buildChainApp(chain, { PUBLIC_URL: base, RATE_LIMIT_PER_MINUTE: '100000' });
  await app.listen({ port, host: '127.0.0.1' });
  second = { chain, app, base };
}, CHAIN_START_TIMEOUT_MS * 2);
afterAll(async () => {
  await second?.app.close();
  await second?.chain.close();
  await w?.close();
});

/** The official client for `account`, appending `paymentId` to every payment it makes. */
function clientWithId(account: PrivateKeyAccount, paymentId: string) {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: toClientEvmSigner(account, w.local.publicClient as never) });
  client.setSpendControls({ allowedAssets: [{ network: w.local.network.caip2, asset: w.token.address }] });
  client.onBeforePaymentCreation(async ({ paymentRequired }) => {
    paymentRequired.extensions ??= {};
    appendPaymentIdentifierToExtensions(paymentRequired.extensions, paymentId);
  });
  return client;
}

/** A payment for the quote at `url`, made by the official HTTP client (a fresh authorization each time). */
async function paymentFor(client: x402Client, url: string): Promise<PaymentPayload> {
  const http = new x402HTTPClient(client);
  const quoted = await fetch(url, { headers: json });
  expect(quoted.status).toBe(402);
  const required = http.getPaymentRequiredResponse((name) => quoted.headers.get(name), await quoted.json());
  return client.createPaymentPayload(required);
}

async function pay(url: string, payload: unknown) {
  const res = await fetch(url, { headers: { ...json, 'payment-signature': encodePayment(payload) } });
  const header = res.headers.get('payment-response');
  return {
    status: res.status,
    body: (await res.json()) as Body,
    settled: header ? decodePaymentResponseHeader(header) : undefined,
  };
}

async function liveClaims(spaceId: string) {
  return w.h.db
    .selectFrom('x402_settlements')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('status', '<>', 'failed')
    .execute();
}

describe('the quote declares payment-identifier', () => {
  it("carries the extension's own declaration, an id optional", async () => {
    const s = await w.seller();
    const request = await w.mint(s.key.key, '2', { account_id: s.account.id });
    const res = await fetch(request.url, { headers: json });
    const quote = (await res.json()) as Body;
    expect(isPaymentIdentifierExtension(quote.extensions[PAYMENT_IDENTIFIER])).toBe(true);
    expect(quote.extensions[PAYMENT_IDENTIFIER].info).toEqual({ required: false });
  });
});

describe('a page payment under a payment identifier', () => {
  it('answers a repeat (a new authorization under the same id) with the first result, on one transaction', async () => {
    const s = await w.seller();
    const request = await w.mint(s.key.key, '2', { account_id: s.account.id });
    const payer = await w.payer(10_000_000n);
    const client = clientWithId(payer, generatePaymentId());
    const first = await paymentFor(client, request.url);
    const repeat = await paymentFor(client, request.url);
    expect(repeat.payload).not.toEqual(first.payload);
    const nonceBefore = await w.gasNonce();
    const paid = await pay(request.url, first);
    expect(paid.status).toBe(200);
    const again = await pay(request.url, repeat);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: request.id, status: 'paid' });
    expect(again.settled?.transaction).toBe(paid.settled?.transaction);
    expect(await w.gasNonce()).toBe(nonceBefore + 1);
    expect(await w.usdcOf(payer.address)).toBe(8_000_000n);
  });

  it("refuses another payment under the same id at the same pay-to with the extension's 409, broadcasting nothing", async () => {
    const s = await w.seller();
    const [one, two] = await Promise.all([
      w.mint(s.key.key, '2', { account_id: s.account.id }),
      w.mint(s.key.key, '3', { account_id: s.account.id }),
    ]);
    const payer = await w.payer(10_000_000n);
    const client = clientWithId(payer, generatePaymentId());
    expect((await pay(one.url, await paymentFor(client, one.url))).status).toBe(200);
    const other = await paymentFor(client, two.url);
    const nonceBefore = await w.gasNonce();
    const refused = await pay(two.url, other);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: 'payment_identifier_conflict' });
    expect(await w.gasNonce()).toBe(nonceBefore);
    expect(await w.usdcOf(payer.address)).toBe(8_000_000n);
    expect((await fetch(two.url, { headers: json })).status).toBe(402);
  });

  it('refuses a malformed id with a fresh quote, claiming nothing', async () => {
    const s = await w.seller();
    const request = await w.mint(s.key.key, '2', { account_id: s.account.id });
    const payer = await w.payer(10_000_000n);
    const payload = await paymentFor(clientWithId(payer, generatePaymentId()), request.url);
    const extension = payload.extensions?.[PAYMENT_IDENTIFIER] as { info: { id: string } };
    extension.info.id = 'short!';
    const refused = await pay(request.url, payload);
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatch(/^invalid_payload: /);
    expect(await liveClaims(s.spaceId)).toEqual([]);
  });
});

describe.skipIf(!postgres)('one payment identifier, two server processes (PostgreSQL)', () => {
  it('settles once when the same payment reaches both servers at once; both, and a later repeat, answer the one transaction', async () => {
    const s = await w.seller();
    const request = await w.mint(s.key.key, '2', { account_id: s.account.id });
    const otherUrl = request.url.replace(w.base, second!.base);
    const payer = await w.payer(10_000_000n);
    const client = clientWithId(payer, generatePaymentId());
    const [a, b, later] = [
      await paymentFor(client, request.url),
      await paymentFor(client, otherUrl),
      await paymentFor(client, otherUrl),
    ];
    const nonceBefore = await w.gasNonce();
    const [first, other] = await Promise.all([pay(request.url, a), pay(otherUrl, b)]);
    expect([first.status, other.status], JSON.stringify([first.body, other.body])).toEqual([200, 200]);
    expect(other.settled?.transaction).toBe(first.settled?.transaction);
    const repeat = await pay(otherUrl, later);
    expect(repeat.status).toBe(200);
    expect(repeat.settled?.transaction).toBe(first.settled?.transaction);
    expect(await w.gasNonce()).toBe(nonceBefore + 1);
    expect(await w.usdcOf(payer.address)).toBe(8_000_000n);
    expect(await liveClaims(s.spaceId)).toHaveLength(1);
  });

  it('settles a stock middleware repeat once though each call went to another facilitator process', async () => {
    const s = await w.seller();
    const facilitators = [w.base, second!.base].map(
      (base) => new HTTPFacilitatorClient({ url: `${base}/x402` }),
    );
    let turn = 0;
    // The resource server's facilitator is whichever Tollbook process this call's turn names.
    const alternating: FacilitatorClient = {
      verify: (payload: PaymentPayload, requirements: PaymentRequirements) =>
        facilitators[turn]!.verify(payload, requirements),
      settle: (payload: PaymentPayload, requirements: PaymentRequirements) =>
        facilitators[turn]!.settle(payload, requirements),
      getSupported: () => facilitators[0]!.getSupported(),
    };
    const shop = await expressSeller(alternating, s.address, '1500000');
    try {
      const payer = await w.payer(5_000_000n);
      const paying = wrapFetchWithPayment(fetch, clientWithId(payer, generatePaymentId()));
      const nonceBefore = await w.gasNonce();
      const first = await paying(shop.url);
      expect(first.status).toBe(200);
      turn = 1;
      const repeat = await paying(shop.url);
      expect(repeat.status).toBe(200);
      expect(await repeat.json()).toEqual({ report: 'sunny' });
      const [one, two] = [first, repeat].map((res) =>
        decodePaymentResponseHeader(res.headers.get('payment-response') ?? ''),
      );
      expect(two?.transaction).toBe(one?.transaction);
      expect(await w.gasNonce()).toBe(nonceBefore + 1);
      expect(await w.usdcOf(payer.address)).toBe(3_500_000n);
      const booked = await w.h.db
        .selectFrom('settlements')
        .selectAll()
        .where('space_id', '=', s.spaceId)
        .execute();
      expect(booked).toHaveLength(1);
    } finally {
      await shop.close();
    }
  });
});

describe('the facilitator under a payment identifier', () => {
  it('refuses a different payment under an id another payment holds, on verify and settle', async () => {
    const s = await w.seller();
    const payer = await w.payer(10_000_000n);
    const paymentId = generatePaymentId();
    const requirement = {
      scheme: 'exact',
      network: w.local.network.caip2,
      asset: w.token.address,
      amount: '2000000',
      payTo: s.address,
      maxTimeoutSeconds: 120,
      extra: { name: w.token.name, version: w.token.version },
    };
    const withId = async (amount: string) => {
      const payload = await w.authorize(payer, { ...requirement, amount });
      const extensions = appendPaymentIdentifierToExtensions(
        { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) },
        paymentId,
      );
      return {
        x402Version: 2,
        paymentPayload: { ...payload, extensions },
        paymentRequirements: { ...requirement, amount },
      };
    };
    const post = async (path: string, body: unknown) =>
      (await fetch(`${w.base}/x402/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((res) => res.json())) as Body;
    expect(await post('settle', await withId('2000000'))).toMatchObject({ success: true });
    const other = await withId('3000000');
    const nonceBefore = await w.gasNonce();
    expect(await post('verify', other)).toMatchObject({
      isValid: false,
      invalidReason: 'payment_identifier_conflict',
    });
    expect(await post('settle', other)).toMatchObject({
      success: false,
      errorReason: 'payment_identifier_conflict',
    });
    expect(await w.gasNonce()).toBe(nonceBefore);
    expect(await w.usdcOf(payer.address)).toBe(8_000_000n);
  });
});

/** A stock Express app selling GET /report for `amount` base units through `facilitator`. */
async function expressSeller(facilitator: FacilitatorClient, payTo: string, amount: string) {
  const server = new x402ResourceServer(facilitator);
  const network = w.local.network.caip2 as `${string}:${string}`;
  server.register(network, new ExactEvmScheme());
  const app = express();
  app.use(
    paymentMiddleware(
      {
        'GET /report': {
          accepts: {
            scheme: 'exact',
            network,
            payTo,
            price: {
              amount,
              asset: w.token.address,
              extra: { name: w.token.name, version: w.token.version },
            },
          },
          description: 'The daily report',
          extensions: { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) },
        },
      },
      server,
    ),
  );
  app.get('/report', (_req, res) => {
    res.json({ report: 'sunny' });
  });
  const listening: Server = await new Promise((resolve) => {
    const started = app.listen(0, '127.0.0.1', () => resolve(started));
  });
  const { port } = listening.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/report`,
    close: () => new Promise((done) => listening.close(done)),
  };
}
