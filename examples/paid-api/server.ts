import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createNetServer } from 'node:net';
import { chargePerCall } from '@tollbook/express';
import express from 'express';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { createRuntime } from '../../src/runtime.ts';

// A paid API in one command (`npm run example`): a Tollbook server on an in-memory database and,
// beside it, an Express app whose GET /forecast costs 0.25 USD per call, charged to the caller's
// prepaid balance by @tollbook/express. Callers name themselves with an X-Caller header.

/** A free loopback port, so Tollbook's PUBLIC_URL (in every pay link) names the port it gets. */
async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const tollbookPort = await freePort();
const tollbookConfig = loadConfig({
  ...process.env,
  DATA_DIR: process.env.DATA_DIR ?? 'memory://',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  MASTER_KEY: process.env.MASTER_KEY ?? randomBytes(32).toString('hex'),
  PORT: String(tollbookPort),
  PUBLIC_URL: `http://127.0.0.1:${tollbookPort}`,
});
const runtime = await createRuntime(tollbookConfig);
const tollbook = await buildApp(runtime);
await tollbook.listen({ host: '127.0.0.1', port: tollbookPort });
const tollbookUrl = tollbookConfig.publicUrl;

/** The seller's setup, through Tollbook's own API: an owner, a space, a key and a USDC wallet. */
async function setUp() {
  const call = async (
    method: 'POST',
    url: string,
    payload: unknown,
    token: string | undefined,
    status: number,
  ) => {
    const res = await tollbook.inject({
      method,
      url,
      payload: payload as never,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    if (res.statusCode !== status) throw new Error(`${url} answered ${res.statusCode}: ${res.body}`);
    return res.json();
  };
  const owner = await call(
    'POST',
    '/app/api/signup',
    { email: 'seller@example.org', password: 'example-password-1', name: 'Seller' },
    undefined,
    201,
  );
  const space = await call(
    'POST',
    '/app/api/spaces',
    { name: 'Forecasts Ltd', base_currency: 'USD', plan: 'pro' },
    owner.session_token,
    201,
  );
  const key = await call(
    'POST',
    `/app/api/spaces/${space.id}/keys`,
    { name: 'Forecast API', scopes: ['payments', 'accounts'] },
    owner.session_token,
    201,
  );
  const wallet = await call(
    'POST',
    '/integration/accounts',
    {
      kind: 'crypto',
      name: 'USDC wallet',
      currency: 'USDC',
      network: 'local',
      address: `0x${'1'.repeat(40)}`,
    },
    key.key,
    201,
  );
  return { key: key.key as string, accountId: wallet.id as string };
}

const { key, accountId } = await setUp();

const app = express();
app.get(
  '/forecast',
  chargePerCall({
    baseUrl: tollbookUrl,
    key,
    accountId,
    amount: '0.25',
    topUpAmount: '5',
    clientRef: (req) => req.get('x-caller'),
  }),
  (_req, res) => {
    res.json({
      forecast: 'sunny',
      charged_usd: res.locals.tollbook.charged_usd,
      balance_usd: res.locals.tollbook.balance_usd,
    });
  },
);
const server = createServer(app);
const port = Number(process.env.EXAMPLE_PORT ?? 0);
await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

process.stdout.write(`
Paid API running.
  Tollbook:  ${tollbookUrl}   (docs at ${tollbookUrl}/docs)
  Your API:  ${apiUrl}/forecast   (0.25 USD a call)

1. Call it as a new caller; the balance is empty, so the answer is 402 with top_up.url:
     curl -i -H 'X-Caller: alice' ${apiUrl}/forecast
2. Open top_up.url in a browser and pay with the test card 4242 4242 4242 4242 (any future date),
   or from the shell:
     curl -X POST -H 'content-type: application/json' \\
       -d '{"number":"4242424242424242","exp":"12/34","cvc":"123"}' <top_up.url>/card
3. Call again: 200, and 0.25 is taken from alice's balance each time.

Ctrl-C stops both servers.
`);

const stop = async () => {
  server.close();
  await tollbook.close();
  await runtime.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
