import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chargePerCall as expressCharge } from '@tollbook/express';
import { chargePerCall as fastifyCharge, tollbookCharges } from '@tollbook/fastify';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.ts';

// The charge-per-call middleware in real Express and Fastify apps, charging through a real
// Tollbook server on a loopback port: a funded caller reaches the handler and is charged once,
// an unfunded one gets 402 with top_up.url, and a retried request (same Idempotency-Key, so the
// same derived key) is charged once.

const TEST_CARD = { number: '4242424242424242', exp: '12/34', cvc: '123' };

let h: Harness;
let tollbookUrl: string;
let key: string;
let accountId: string;
let expressServer: Server;
let expressUrl: string;
let fastifyApp: FastifyInstance;
let fastifyUrl: string;
const handled: string[] = [];

const listening = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );

beforeAll(async () => {
  h = await createHarness();
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  tollbookUrl = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  const world = await h.world({ scopes: ['payments'] });
  key = world.key.key;
  accountId = (await h.makeWallet(world.spaceId)).id;
  const options = {
    baseUrl: tollbookUrl,
    key,
    accountId,
    amount: '0.25',
    topUpAmount: '5',
    clientRef: (req: { headers: Record<string, string | string[] | undefined> }) => {
      const caller = req.headers['x-caller'];
      return typeof caller === 'string' ? caller : undefined;
    },
  };

  const app = express();
  app.get('/forecast', expressCharge(options), (_req, res) => {
    handled.push('express');
    res.json({ forecast: 'sunny', charged: res.locals.tollbook.charged_usd });
  });
  expressServer = createServer(app);
  expressUrl = await listening(expressServer);

  fastifyApp = Fastify();
  fastifyApp.get('/forecast', { preHandler: fastifyCharge(options) }, async (request) => {
    handled.push('fastify');
    return { forecast: 'rain', charged: request.tollbook?.charged_usd };
  });
  await fastifyApp.register(tollbookCharges, {
    ...options,
    amount: '1',
    routes: (scope) => {
      scope.get('/premium', async () => {
        handled.push('fastify-plugin');
        return { premium: true };
      });
    },
  });
  fastifyUrl = await fastifyApp.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await new Promise((resolve) => expressServer.close(resolve));
  await fastifyApp.close();
  await h.close();
});

async function balanceOf(clientRef: string): Promise<string> {
  const res = await h.inject({
    method: 'POST',
    url: '/integration/charges',
    key,
    payload: { client_ref: clientRef, account_id: accountId, amount: '1000000' },
  });
  return res.json().balance_usd;
}

/** The 402's top-up request, paid by card on its pay page: what a caller does to fund itself. */
async function payTopUp(answer: { top_up: { url: string } }) {
  const res = await fetch(`${answer.top_up.url.replace(/^https?:\/\/[^/]+/, tollbookUrl)}/card`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(TEST_CARD),
  });
  expect(res.status).toBe(200);
}

for (const flavour of ['express', 'fastify'] as const) {
  describe(`chargePerCall in ${flavour}`, () => {
    const base = () => (flavour === 'express' ? expressUrl : fastifyUrl);

    it('answers an unfunded caller 402 with top_up.url and the balance page, and never runs the handler', async () => {
      const before = handled.length;
      const res = await fetch(`${base()}/forecast`, {
        headers: { 'x-caller': `new-${flavour}-${Date.now()}` },
      });
      expect(res.status).toBe(402);
      const body = (await res.json()) as {
        error: string;
        top_up: { url: string; amount: string };
        balance_url: string;
      };
      expect(body.error).toBe('insufficient_balance');
      expect(body.top_up.url).toContain('/pay/');
      expect(body.top_up.amount).toBe('5.00000000');
      expect(body.balance_url).toContain('/credit/');
      expect(handled.length).toBe(before);
    });

    it('lets a funded caller reach the handler and charges it once per call', async () => {
      const caller = `funded-${flavour}-${Date.now()}`;
      const refused = await fetch(`${base()}/forecast`, { headers: { 'x-caller': caller } });
      await payTopUp((await refused.json()) as { top_up: { url: string } });
      const res = await fetch(`${base()}/forecast`, { headers: { 'x-caller': caller } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { charged: string }).charged).toBe('0.25');
      expect(await balanceOf(caller)).toBe('4.75000000');
    });

    it('charges a retried request once: the same Idempotency-Key derives the same charge key', async () => {
      const caller = `retry-${flavour}-${Date.now()}`;
      const refused = await fetch(`${base()}/forecast`, { headers: { 'x-caller': caller } });
      await payTopUp((await refused.json()) as { top_up: { url: string } });
      const headers = { 'x-caller': caller, 'idempotency-key': `req-${Date.now()}` };
      const answers = await Promise.all([1, 2, 3].map(() => fetch(`${base()}/forecast`, { headers })));
      const statuses = answers.map((answer) => answer.status);
      // A copy that arrives while the first is still charging may be asked to retry (503).
      expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(1);
      expect(statuses.every((status) => status === 200 || status === 503)).toBe(true);
      const again = await fetch(`${base()}/forecast`, { headers });
      expect(again.status).toBe(200);
      expect(await balanceOf(caller)).toBe('4.75000000');
      const fresh = await fetch(`${base()}/forecast`, { headers: { 'x-caller': caller } });
      expect(fresh.status).toBe(200);
      expect(await balanceOf(caller)).toBe('4.50000000');
    });

    it('refuses an unnamed caller with 401', async () => {
      const res = await fetch(`${base()}/forecast`);
      expect(res.status).toBe(401);
    });
  });
}

it('charges every route inside the Fastify plugin', async () => {
  const caller = `plugin-${Date.now()}`;
  const refused = await fetch(`${fastifyUrl}/premium`, { headers: { 'x-caller': caller } });
  expect(refused.status).toBe(402);
  await payTopUp((await refused.json()) as { top_up: { url: string } });
  const res = await fetch(`${fastifyUrl}/premium`, { headers: { 'x-caller': caller } });
  expect(res.status).toBe(200);
  expect(handled).toContain('fastify-plugin');
  expect(await balanceOf(caller)).toBe('4.00000000');
});
