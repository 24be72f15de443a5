import type { Server } from 'node:http';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware } from '@x402/express';
import { withBazaar } from '@x402/extensions/bazaar';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Body, type Requirement, startX402World, type X402World } from './x402-setup.ts';

// Tollbook as the facilitator of a stock x402 middleware, and its /x402 endpoints on their own.

const METRICS_TOKEN = 'x402-metrics-token-0123456789';
let w: X402World;
beforeAll(async () => {
  w = await startX402World({ METRICS_TOKEN });
});
afterAll(() => w?.close());

function requirementFor(payTo: string, amount: string): Requirement {
  return {
    scheme: 'exact',
    network: w.local.network.caip2,
    asset: w.token.address,
    amount,
    payTo,
    maxTimeoutSeconds: 120,
    extra: { name: w.token.name, version: w.token.version },
  };
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${w.base}/x402/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Body };
}

/** A stock Express app selling GET /report for `amount` base units, with Tollbook as facilitator. */
async function expressSeller(payTo: string, amount: string) {
  const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${w.base}/x402` }));
  server.register(w.local.network.caip2 as `${string}:${string}`, new ExactEvmScheme());
  const app = express();
  app.use(
    paymentMiddleware(
      {
        'GET /report': {
          accepts: {
            scheme: 'exact',
            network: w.local.network.caip2 as `${string}:${string}`,
            payTo,
            price: {
              amount,
              asset: w.token.address,
              extra: { name: w.token.name, version: w.token.version },
            },
          },
          description: 'The daily report',
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

describe('a stock @x402/express app with Tollbook as its facilitator', () => {
  it("is paid by @x402/fetch; the money lands under that resource's endpoint card in the space that proved the address", async () => {
    const s = await w.seller();
    const shop = await expressSeller(s.address, '1500000');
    try {
      const payer = await w.payer(5_000_000n);
      const res = await w.payingFetch(payer)(shop.url);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ report: 'sunny' });
      expect(await w.usdcOf(s.address)).toBe(1_500_000n);
      expect(await w.usdcOf(payer.address)).toBe(3_500_000n);
      const resource = await w.h.db
        .selectFrom('resources')
        .selectAll()
        .where('space_id', '=', s.spaceId)
        .execute();
      expect(resource.map((row) => row.address)).toEqual([shop.url]);
      const requests = await w.h.db
        .selectFrom('payment_requests')
        .selectAll()
        .where('space_id', '=', s.spaceId)
        .execute();
      expect(requests).toHaveLength(1);
      expect(requests[0]).toMatchObject({ status: 'paid', resource_id: resource[0]!.id, currency: 'USDC' });
      expect(Number(requests[0]!.amount_received)).toBe(1.5);
      const entries = await w.h.db
        .selectFrom('settlements')
        .selectAll()
        .where('payment_request_id', '=', requests[0]!.id)
        .execute();
      expect(entries).toEqual([expect.objectContaining({ rail: 'x402', payer: payer.address })]);
    } finally {
      await shop.close();
    }
  });
});

describe('GET /x402/supported', () => {
  it('lists every configured network as a v2 exact kind, the gas wallet as signer, and the bazaar, payment-identifier and offer-receipt extensions', async () => {
    const res = await fetch(`${w.base}/x402/supported`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    expect(body.kinds).toEqual([{ x402Version: 2, scheme: 'exact', network: 'eip155:31337' }]);
    expect(body.extensions).toEqual(['bazaar', 'payment-identifier', 'offer-receipt']);
    expect(Object.values(body.signers).flat()).toContain(w.chain.gasWallet);
  });
});

describe('POST /x402/verify and /x402/settle', () => {
  it('settles the same payload once: a second /settle, sequential or concurrent, answers the same transaction', async () => {
    const s = await w.seller();
    const payer = await w.payer(10_000_000n);
    const requirement = requirementFor(s.address, '2000000');
    const payload = await w.authorize(payer, requirement);
    const envelope = { x402Version: 2, paymentPayload: payload, paymentRequirements: requirement };
    expect((await post('verify', envelope)).body).toMatchObject({ isValid: true, payer: payer.address });
    const nonceBefore = await w.gasNonce();
    const [first, second] = await Promise.all([post('settle', envelope), post('settle', envelope)]);
    const third = await post('settle', envelope);
    expect(first.body).toMatchObject({ success: true, network: 'eip155:31337' });
    expect(second.body.transaction).toBe(first.body.transaction);
    expect(third.body).toMatchObject({ success: true, transaction: first.body.transaction });
    expect(await w.gasNonce()).toBe(nonceBefore + 1);
    expect(await w.usdcOf(payer.address)).toBe(8_000_000n);
    const rows = await w.h.db
      .selectFrom('settlements')
      .selectAll()
      .where('space_id', '=', s.spaceId)
      .execute();
    expect(rows).toHaveLength(1);
  });

  const refusals: [string, (payTo: string) => Partial<Requirement>, string][] = [
    [
      'an unknown asset',
      () => ({ asset: '0x1111111111111111111111111111111111111111' }),
      'unsupported_asset',
    ],
    ['an unserved network', () => ({ network: 'eip155:8453' }), 'unsupported_network'],
    ['an amount below the floor', () => ({ amount: '999999' }), 'amount_below_floor'],
    [
      'a pay-to address no space proved',
      () => ({ payTo: '0x3333333333333333333333333333333333333333' }),
      'pay_to_not_proven',
    ],
  ];
  for (const [name, change, reason] of refusals) {
    it(`refuses ${name} (${reason}) on verify and settle, with nothing on chain`, async () => {
      const s = await w.seller();
      const payer = await w.payer(10_000_000n);
      const requirement = { ...requirementFor(s.address, '2000000'), ...change(s.address) };
      const payload = await w.authorize(payer, requirement);
      const envelope = { x402Version: 2, paymentPayload: payload, paymentRequirements: requirement };
      const nonceBefore = await w.gasNonce();
      const verified = await post('verify', envelope);
      expect(verified.status).toBe(200);
      expect(verified.body).toMatchObject({ isValid: false, invalidReason: reason });
      const settled = await post('settle', envelope);
      expect(settled.body).toMatchObject({ success: false, errorReason: reason, transaction: '' });
      expect(await w.gasNonce()).toBe(nonceBefore);
      expect(await w.usdcOf(payer.address)).toBe(10_000_000n);
    });
  }

  it('pins the space with an integration key: an address proven only elsewhere is refused', async () => {
    const s = await w.seller();
    const other = await w.h.world({ scopes: ['payments'] });
    const payer = await w.payer(10_000_000n);
    const requirement = requirementFor(s.address, '2000000');
    const envelope = {
      x402Version: 2,
      paymentPayload: await w.authorize(payer, requirement),
      paymentRequirements: requirement,
    };
    const pinned = await post('verify', envelope, { authorization: `Bearer ${other.key.key}` });
    expect(pinned.body).toMatchObject({ isValid: false, invalidReason: 'pay_to_not_proven' });
    const own = await post('verify', envelope, { authorization: `Bearer ${s.key.key}` });
    expect(own.body).toMatchObject({ isValid: true });
    const bad = await post('verify', envelope, { authorization: 'Bearer oit_nope' });
    expect(bad.status).toBe(401);
  });

  it("answers a malformed envelope with 422 and the spec's error body", async () => {
    const res = await post('verify', {
      x402Version: 2,
      paymentPayload: {},
      paymentRequirements: { scheme: 'exact' },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: expect.any(String) })]),
    );
  });
});

describe('GET /metrics', () => {
  it('exposes the gas wallet balance per network and lane, read by the timer, and whether it is low', async () => {
    const scrape = async () => {
      const res = await fetch(`${w.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(res.status).toBe(200);
      return res.text();
    };
    // Each lane is labelled by its address: the same addresses /x402/supported lists as signers.
    const lane = w.chain.gasWallet!.toLowerCase();
    const labels = `{network="eip155:31337",address="${lane}"}`;
    const readingOf = (text: string) =>
      text.split('\n').find((row) => row.startsWith(`tollbook_gas_wallet_balance_wei${labels}`));
    // The timer's first reading is taken at start; wait for it rather than for a scrape to cause one.
    let text = await scrape();
    for (let attempt = 0; attempt < 50 && readingOf(text) === undefined; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      text = await scrape();
    }
    const wei = await w.local.publicClient.getBalance({ address: w.chain.gasWallet! });
    const line = readingOf(text);
    expect(line).toBeDefined();
    // Other tests may spend gas between the two reads; the metric is never below the later read.
    // Prometheus samples are floats: the reading keeps 15 significant digits of the wei.
    expect(Number(line!.split(' ').pop()!)).toBeGreaterThanOrEqual(Number(wei) * (1 - 1e-12));
    expect(text).toContain(`tollbook_gas_wallet_low${labels} 0`);
    // A scrape is no chain call: one reading so far.
    const reads = (body: string) => /^tollbook_gas_wallet_reads_total (\d+)$/m.exec(body)?.[1];
    const before = reads(text);
    for (let again = 0; again < 3; again++) await scrape();
    expect(reads(await scrape())).toBe(before);
    expect((await fetch(`${w.base}/metrics`)).status).toBe(401);
  });
});

describe('the discovery list, read by the bazaar client of @x402/extensions', () => {
  it('lists a Findable card with its address and name in the bazaar shape', async () => {
    const s = await w.seller();
    const shop = await expressSeller(s.address, '1000000');
    try {
      const payer = await w.payer(5_000_000n);
      expect((await w.payingFetch(payer)(shop.url)).status).toBe(200);
      const cards = await w.h.inject({
        method: 'GET',
        url: `/app/api/spaces/${s.spaceId}/endpoints`,
        session: s.owner.token,
      });
      const card = cards.json().items[0];
      expect(card).toMatchObject({ address: shop.url, call_count: 1 });
      await w.h.inject({
        method: 'PATCH',
        url: `/app/api/spaces/${s.spaceId}/endpoints/${card.id}`,
        session: s.owner.token,
        payload: { name: 'Daily report', findable: true },
      });
      const bazaar = withBazaar(new HTTPFacilitatorClient({ url: `${w.base}/x402` })).extensions.bazaar;
      const listed = await bazaar.listResources({ type: 'http', limit: 100 });
      expect(listed.x402Version).toBe(2);
      expect(listed.pagination).toMatchObject({ limit: 100, offset: 0 });
      const item = listed.items.find((entry) => entry.resource === shop.url);
      expect(item).toEqual({
        resource: shop.url,
        type: 'http',
        x402Version: 2,
        accepts: [],
        lastUpdated: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        description: 'Daily report',
      });
    } finally {
      await shop.close();
    }
  });
});
