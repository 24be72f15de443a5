import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

// A local server shaped like Stripe's API, for the card rail's tests: the real `stripe` SDK talks
// to it (host, port, protocol), it answers the calls the rail makes (Checkout Sessions, charges)
// with Stripe's object shapes, honours Idempotency-Key as Stripe does, serves a checkout page a
// browser can land on, and makes the events Stripe would send, signed with the SDK's own helper.

export const STRIPE_SECRET_KEY = `sk_test_${randomBytes(12).toString('hex')}`;
export const STRIPE_WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x')}`;

type Session = {
  id: string;
  object: 'checkout.session';
  url: string;
  mode: string;
  amount_total: number;
  currency: string;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  payment_intent: string | null;
  payment_status: 'unpaid' | 'paid';
  status: 'open' | 'complete';
  success_url: string;
  cancel_url: string;
  customer_details: { email: string } | null;
  line_items_sent: unknown;
  payment_intent_data_sent: unknown;
};

type Charge = {
  id: string;
  object: 'charge';
  payment_intent: string;
  amount: number;
  amount_refunded: number;
  currency: string;
};

/** Stripe's form encoding (`a[b][0][c]=1`) read back into objects and arrays. */
export function parseStripeForm(body: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [rawKey, value] of new URLSearchParams(body)) {
    const path = rawKey.split(/[[\]]+/).filter((part) => part !== '');
    let node: Record<string, unknown> = root;
    path.forEach((part, index) => {
      if (index === path.length - 1) {
        node[part] = value;
        return;
      }
      node[part] ??= {};
      node = node[part] as Record<string, unknown>;
    });
  }
  return root;
}

const newId = (prefix: string) => `${prefix}_test_${randomBytes(12).toString('hex')}`;

export async function startStripeServer() {
  const sessions = new Map<string, Session>();
  const charges = new Map<string, Charge>();
  const byIdempotencyKey = new Map<string, Session>();
  const calls: { method: string; path: string; idempotencyKey: string | undefined }[] = [];
  const sdk = new Stripe(STRIPE_SECRET_KEY);

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req') });
    res.end(JSON.stringify(body));
  };

  function createSession(form: Record<string, unknown>, origin: string): Session {
    const items = form.line_items as Record<
      string,
      { quantity: string; price_data: Record<string, unknown> }
    >;
    const item = items['0']!;
    const price = item.price_data as { currency: string; unit_amount: string };
    const id = newId('cs');
    return {
      id,
      object: 'checkout.session',
      url: `${origin}/c/pay/${id}`,
      mode: String(form.mode),
      amount_total: Number(price.unit_amount) * Number(item.quantity),
      currency: price.currency,
      client_reference_id: (form.client_reference_id as string | undefined) ?? null,
      metadata: (form.metadata as Record<string, string> | undefined) ?? {},
      payment_intent: null,
      payment_status: 'unpaid',
      status: 'open',
      success_url: String(form.success_url),
      cancel_url: String(form.cancel_url),
      customer_details: null,
      line_items_sent: form.line_items,
      payment_intent_data_sent: form.payment_intent_data,
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse, body: string, origin: string) {
    const path = (req.url ?? '/').split('?')[0]!;
    const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
    calls.push({ method: req.method ?? '', path, idempotencyKey });
    if (req.method === 'GET' && path.startsWith('/c/pay/')) {
      const session = sessions.get(path.slice('/c/pay/'.length));
      res.writeHead(session ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        session
          ? `<!doctype html><title>Test checkout</title><h1 id="checkout">Checkout ${session.id}</h1><p id="total">${session.amount_total} ${session.currency}</p>`
          : 'no such session',
      );
      return;
    }
    if (path === '/favicon.ico') {
      res.writeHead(204).end();
      return;
    }
    if (req.headers.authorization !== `Bearer ${STRIPE_SECRET_KEY}`) {
      return send(res, 401, {
        error: { type: 'invalid_request_error', message: 'Invalid API Key provided' },
      });
    }
    if (req.method === 'POST' && path === '/v1/checkout/sessions') {
      const known = idempotencyKey ? byIdempotencyKey.get(idempotencyKey) : undefined;
      if (known) return send(res, 200, known);
      const session = createSession(parseStripeForm(body), origin);
      sessions.set(session.id, session);
      if (idempotencyKey) byIdempotencyKey.set(idempotencyKey, session);
      return send(res, 200, session);
    }
    if (req.method === 'GET' && path.startsWith('/v1/charges/')) {
      const charge = charges.get(path.slice('/v1/charges/'.length));
      if (!charge)
        return send(res, 404, { error: { type: 'invalid_request_error', message: 'No such charge' } });
      return send(res, 200, charge);
    }
    return send(res, 404, {
      error: { type: 'invalid_request_error', message: `Unrecognized request URL (${path})` },
    });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const origin = `http://${req.headers.host}`;
      handle(req, res, Buffer.concat(chunks).toString('utf8'), origin).catch((error: unknown) =>
        send(res, 500, { error: { type: 'api_error', message: String(error) } }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  /** An event as Stripe sends it: the body, and its Stripe-Signature header made with the given secret. */
  function signedEvent(type: string, object: unknown, secret = STRIPE_WEBHOOK_SECRET) {
    const payload = JSON.stringify(
      {
        id: newId('evt'),
        object: 'event',
        api_version: '2026-10-28.endive',
        created: Math.floor(Date.now() / 1000),
        type,
        livemode: false,
        pending_webhooks: 1,
        data: { object },
      },
      null,
      2,
    );
    return { payload, signature: sdk.webhooks.generateTestHeaderString({ payload, secret }) };
  }

  return {
    url,
    sessions,
    calls,
    signedEvent,
    /** The payer finishes Checkout: Stripe charges the card and reports the paid session. */
    pay(sessionId: string, email = 'payer@example.com') {
      const session = sessions.get(sessionId);
      if (!session) throw new Error(`no session ${sessionId}`);
      const paymentIntent = newId('pi');
      const charge: Charge = {
        id: newId('ch'),
        object: 'charge',
        payment_intent: paymentIntent,
        amount: session.amount_total,
        amount_refunded: 0,
        currency: session.currency,
      };
      charges.set(charge.id, charge);
      Object.assign(session, {
        payment_intent: paymentIntent,
        payment_status: 'paid',
        status: 'complete',
        customer_details: { email },
      });
      return { charge, event: signedEvent('checkout.session.completed', session) };
    },
    /** The seller refunds part of a charge in Stripe's dashboard: the charge.refunded event. */
    refund(chargeId: string, amountMinor: number) {
      const charge = charges.get(chargeId);
      if (!charge) throw new Error(`no charge ${chargeId}`);
      charge.amount_refunded += amountMinor;
      const refund = {
        id: newId('re'),
        object: 'refund',
        amount: amountMinor,
        charge: charge.id,
        currency: charge.currency,
        payment_intent: charge.payment_intent,
        status: 'succeeded',
      };
      return {
        refund,
        charged: signedEvent('charge.refunded', { ...charge }),
        created: signedEvent('refund.created', refund),
      };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type StripeServer = Awaited<ReturnType<typeof startStripeServer>>;

/** The harness settings that turn the card rail on against this server. */
export const stripeEnv = (server: StripeServer) => ({
  STRIPE_SECRET_KEY,
  STRIPE_WEBHOOK_SECRET,
  STRIPE_API_URL: server.url,
});
