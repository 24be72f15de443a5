import type { Server } from 'node:http';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import { HTTPFacilitatorClient, x402HTTPResourceServer, x402ResourceServer } from '@x402/core/server';
import { toClientEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddlewareFromHTTPServer } from '@x402/express';
import {
  createSIWxClientHook,
  createSIWxResourceServerExtension,
  declareSIWxExtension,
  wrapFetchWithSIWx,
} from '@x402/extensions/sign-in-with-x';
import { wrapFetchWithPayment } from '@x402/fetch';
import express from 'express';
import type { PrivateKeyAccount } from 'viem/accounts';
import { x402Credit } from '../../packages/client/src/index.ts';
import type { X402World } from './x402-setup.ts';

// A seller's stock x402 server (Express, @x402/express) whose 402 declares sign-in-with-x and
// whose payment tops up the payer's Tollbook credit; and the payer's official clients.

type Seller = Awaited<ReturnType<X402World['seller']>>;

/** Base units of the test token (six decimals) for a decimal USD amount such as "1". */
export const baseUnits = (usd: string) => String(Math.round(Number(usd) * 1_000_000));

/**
 * GET /report sold for `topUp` USD through x402 (the payment tops up the payer's credit) and
 * `price` USD a call from the credit, Tollbook as facilitator with the seller's key.
 */
export async function creditSeller(w: X402World, s: Seller, terms: { price: string; topUp: string }) {
  const app = express();
  const listening: Server = await new Promise((resolve) => {
    const started = app.listen(0, '127.0.0.1', () => resolve(started));
  });
  const { port } = listening.address() as { port: number };
  const origin = `http://127.0.0.1:${port}`;
  const credit = x402Credit({
    baseUrl: w.base,
    key: s.key.key,
    accountId: s.account.id,
    price: terms.price,
    origin,
  });
  const facilitator = new HTTPFacilitatorClient({
    url: `${w.base}/x402`,
    createAuthHeaders: async () => {
      const headers = { authorization: `Bearer ${s.key.key}` };
      return { verify: headers, settle: headers, supported: {} };
    },
  });
  const network = w.local.network.caip2 as `${string}:${string}`;
  const server = new x402ResourceServer(facilitator);
  server.register(network, new ExactEvmScheme());
  server.registerExtension(createSIWxResourceServerExtension({ storage: credit.storage, origin }));
  const routes = {
    'GET /report': {
      accepts: {
        scheme: 'exact',
        network,
        payTo: s.address,
        price: {
          amount: baseUnits(terms.topUp),
          asset: w.token.address,
          extra: { name: w.token.name, version: w.token.version, ...credit.extra },
        },
      },
      description: 'The daily report',
      extensions: declareSIWxExtension({
        statement: 'Sign in to pay from your credit',
        expirationSeconds: 120,
      }),
    },
  };
  const httpServer = new x402HTTPResourceServer(server, routes).onProtectedRequest(credit.onProtectedRequest);
  app.use(paymentMiddlewareFromHTTPServer(httpServer));
  app.get('/report', (_req, res) => {
    res.json({ report: 'sunny' });
  });
  return {
    url: `${origin}/report`,
    close: () => new Promise((done) => listening.close(done)),
  };
}

/** Records the SIGN-IN-WITH-X header of every request a client sends, in order. */
export function recordingFetch() {
  const signIns: string[] = [];
  const send = (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const signIn = request.headers.get('sign-in-with-x');
    if (signIn) signIns.push(signIn);
    return fetch(request);
  };
  return { signIns, fetch: send as typeof fetch };
}

/** The official clients: @x402/fetch paying, with the SIWX extension's client hook to sign in first. */
export function signingPayer(w: X402World, payer: PrivateKeyAccount, send: typeof fetch = fetch) {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: toClientEvmSigner(payer, w.local.publicClient as never) });
  client.setSpendControls({ allowedAssets: [{ network: w.local.network.caip2, asset: w.token.address }] });
  const http = new x402HTTPClient(client).onPaymentRequired(createSIWxClientHook(payer));
  return wrapFetchWithPayment(send, http);
}

/** The SIWX extension's own fetch wrapper alone: signs in, never pays. */
export function signingOnly(payer: PrivateKeyAccount, send: typeof fetch = fetch) {
  return wrapFetchWithSIWx(send, payer);
}
