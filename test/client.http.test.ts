import type { AddressInfo } from 'node:net';
import { createTollbook, TollbookError, TollbookWebhookError, verifyWebhook } from '@tollbook/client';
import { afterAll, assert, beforeAll, describe, expect, it } from 'vitest';
import { createSenders, type Senders, WebhookWorker } from '../src/features/webhooks/index.ts';
import { createHarness, type Harness, type Key } from './harness.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

// The typed client (packages/client) against a real Tollbook server listening on a loopback
// port: typed answers per operation family, refusals as TollbookError with the stable code,
// the automatic Idempotency-Key with retries, and the webhook verifier on real deliveries.

let h: Harness;
let baseUrl: string;
let key: Key;
let spaceId: string;
let ownerToken: string;
let walletId: string;
let receiver: Receiver;
let senders: Senders;

const TEST_CARD = { number: '4242424242424242', exp: '12/34', cvc: '123' };

beforeAll(async () => {
  h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  receiver = await startReceiver();
  const world = await h.world({
    scopes: ['payments', 'invoices', 'contacts', 'accounts', 'transactions'],
    webhook_url: receiver.url,
    push_source: 'stripe',
  });
  key = world.key;
  spaceId = world.spaceId;
  ownerToken = world.owner.token;
  walletId = (await h.makeWallet(spaceId)).id;
  senders = createSenders({ allowPrivate: true, resolver: h.deps.resolver, timeoutMs: 2_000 });
});
afterAll(async () => {
  await Promise.all([senders.key.close(), senders.subscription.close(), receiver.close()]);
  await h.close();
});

const client = (options: Partial<Parameters<typeof createTollbook>[0]> = {}) =>
  createTollbook({ baseUrl, key: key.key, sleep: async () => {}, ...options });

async function payByCard(token: string) {
  const res = await fetch(`${baseUrl}/pay/${token}/card`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(TEST_CARD),
  });
  expect(res.status).toBe(200);
}

/** Tops up a client's balance through the server: a refused charge's top-up request, paid by card. */
async function topUp(clientRef: string, amount: string) {
  const { data } = await client().POST('/integration/charges', {
    body: { client_ref: clientRef, account_id: walletId, amount: '1000000', top_up_amount: amount },
  });
  expect(data!.paid).toBe(false);
  await payByCard(data!.top_up!.token);
}

async function balanceOf(clientRef: string): Promise<string> {
  const { data } = await client().POST('/integration/charges', {
    body: { client_ref: clientRef, account_id: walletId, amount: '1000000' },
  });
  return data!.balance_usd;
}

describe('the typed client against a live server', () => {
  it('answers typed records for every operation family', async () => {
    const tollbook = client();
    const ping = await tollbook.GET('/integration/ping');
    expect(ping.data).toEqual({ space_id: spaceId, scopes: expect.arrayContaining(['payments']) });

    const minted = await tollbook.POST('/integration/payment-requests', {
      body: { account_id: walletId, amount: '2.5' },
    });
    expect(minted.data!.url).toContain(`/pay/${minted.data!.token}`);
    const read = await tollbook.GET('/integration/payment-requests/{token}', {
      params: { path: { token: minted.data!.token } },
    });
    expect(read.data!.status).toBe('active');

    const contact = await tollbook.POST('/integration/contacts', { body: { name: 'Ada Client' } });
    expect(contact.data!.name).toBe('Ada Client');

    const account = await tollbook.POST('/integration/accounts', {
      body: { kind: 'bank', name: 'Operating bank', currency: 'USD' },
    });
    const accounts = await tollbook.GET('/integration/accounts');
    expect(JSON.stringify(accounts.data)).toContain(account.data!.id);

    const invoice = await tollbook.POST('/integration/invoices', {
      body: {
        account_id: account.data!.id,
        client_name: 'Acme GmbH',
        due_on: '2026-12-31',
        line_items: [
          {
            description: 'Consulting',
            unit_price: '100',
            quantity: '2',
            tax_kind: 'standard',
            tax_rate: '20',
          },
        ],
      },
    });
    const sent = await tollbook.POST('/integration/invoices/{id}/send', {
      params: { path: { id: invoice.data!.id } },
      body: { via: 'none' },
    });
    expect(sent.data!.status).toBe('sent');

    const pushed = await tollbook.POST('/integration/transactions', {
      body: {
        rows: [
          {
            external_id: `client-test-${Date.now()}`,
            account_key: 'stripe',
            currency: 'USD',
            occurred_on: '2026-03-02',
            amount: '12.5',
          },
        ],
      },
    });
    expect(pushed.data!.booked).toBe(1);
  });

  it('throws TollbookError with the stable code: unauthorized, not_found, validation_failed', async () => {
    const stranger = createTollbook({ baseUrl, key: `oit_${'x'.repeat(43)}` });
    await expect(stranger.GET('/integration/ping')).rejects.toMatchObject({
      name: 'TollbookError',
      status: 401,
      code: 'unauthorized',
    });
    const missing = await client()
      .GET('/integration/invoices/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } })
      .catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(TollbookError);
    expect((missing as TollbookError).code).toBe('not_found');
    const invalid = await client()
      .POST('/integration/charges', { body: { client_ref: '', account_id: walletId, amount: '-1' } })
      .catch((error: unknown) => error);
    assert(invalid instanceof TollbookError);
    expect(invalid.status).toBe(422);
    expect(invalid.code).toBe('validation_failed');
    expect(JSON.stringify(invalid.details)).toContain('amount');
  });

  it('charges once when the connection drops after the server answered, and the retry carries the same key', async () => {
    const ref = `dropped-${Date.now()}`;
    await topUp(ref, '5');
    const keysSent: (string | null)[] = [];
    let dropped = false;
    const tollbook = client({
      fetch: async (request) => {
        keysSent.push(request.headers.get('idempotency-key'));
        const response = await fetch(request);
        if (!dropped) {
          // The server charged and answered; the caller never sees it.
          dropped = true;
          await response.arrayBuffer();
          throw new TypeError('fetch failed: socket hang up');
        }
        return response;
      },
    });
    const { data } = await tollbook.POST('/integration/charges', {
      body: { client_ref: ref, account_id: walletId, amount: '1.25' },
    });
    expect(data!.paid).toBe(true);
    expect(keysSent).toHaveLength(2);
    expect(keysSent[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keysSent[1]).toBe(keysSent[0]);
    expect(await balanceOf(ref)).toBe('3.75000000');
  });

  it('sends concurrent charges with distinct keys, each charged once', async () => {
    const ref = `parallel-${Date.now()}`;
    await topUp(ref, '10');
    const tollbook = client();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        tollbook.POST('/integration/charges', {
          body: { client_ref: ref, account_id: walletId, amount: '1' },
        }),
      ),
    );
    expect(answers.every((answer) => answer.data!.paid)).toBe(true);
    expect(await balanceOf(ref)).toBe('2.00000000');
  });

  it('retries reads and keyed writes after network errors, at most attemptsMax times', async () => {
    let calls = 0;
    const tollbook = client({
      fetch: async () => {
        calls++;
        throw new TypeError('fetch failed');
      },
    });
    await expect(tollbook.GET('/integration/ping')).rejects.toThrow('fetch failed');
    expect(calls).toBe(3);
    calls = 0;
    await expect(tollbook.POST('/integration/contacts', { body: { name: 'N' } })).rejects.toThrow();
    // A write under /integration gets an Idempotency-Key, so it is retried as safely as a read.
    expect(calls).toBe(3);
  });
});

describe('429: the client honours Retry-After from a real rate limiter', () => {
  it('waits what Retry-After says between attempts and then throws rate_limited', async () => {
    const limited = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
    try {
      await limited.app.listen({ host: '127.0.0.1', port: 0 });
      const url = `http://127.0.0.1:${(limited.app.server.address() as AddressInfo).port}`;
      const world = await limited.world({ scopes: ['payments'] });
      const waits: number[] = [];
      const tollbook = createTollbook({
        baseUrl: url,
        key: world.key.key,
        sleep: async (ms) => {
          waits.push(ms);
        },
      });
      await tollbook.GET('/integration/ping');
      await tollbook.GET('/integration/ping');
      const error = (await tollbook
        .GET('/integration/ping')
        .catch((caught: unknown) => caught)) as TollbookError;
      expect(error.status).toBe(429);
      expect(error.code).toBe('rate_limited');
      expect(waits).toHaveLength(2);
      for (const wait of waits) {
        expect(wait).toBeGreaterThanOrEqual(1000);
        expect(wait % 1000).toBe(0);
      }
    } finally {
      await limited.close();
    }
  });
});

describe('verifyWebhook against deliveries from the server', () => {
  it('accepts a key-channel and a book-channel delivery, and refuses a changed body or a wrong secret', async () => {
    const subscription = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/subscriptions`,
      session: ownerToken,
      payload: { url: receiver.url, events: ['money.in'] },
    });
    expect(subscription.statusCode).toBe(201);
    const subscriptionSecret = subscription.json().secret as string;

    // A mirrored invoice paid in full: invoice.paid on the key channel, money.in on the book's.
    const tollbook = client();
    const bank = await tollbook.POST('/integration/accounts', {
      body: { kind: 'bank', name: 'Receiving bank', currency: 'USD' },
    });
    const invoice = await tollbook.POST('/integration/invoices', {
      body: {
        account_id: bank.data!.id,
        client_name: 'Acme GmbH',
        due_on: '2026-12-31',
        line_items: [{ description: 'Consulting', unit_price: '3', quantity: '1' }],
      },
    });
    const id = invoice.data!.id;
    await tollbook.POST('/integration/invoices/{id}/send', {
      params: { path: { id } },
      body: { via: 'none' },
    });
    const paid = await tollbook.POST('/integration/invoices/{id}/payments', {
      params: { path: { id } },
      body: { amount: invoice.data!.total, account_id: bank.data!.id },
    });
    expect(paid.data!.status).toBe('paid');
    const worker = new WebhookWorker(
      { db: h.db, clock: h.clock, secrets: h.deps.secrets, senders },
      { spaceIds: [spaceId] },
    );
    await worker.drain();

    const keyDelivery = receiver.arrivals.find(
      (arrival) => arrival.headers['x-service-event'] === 'invoice.paid' && arrival.body.includes(id),
    )!;
    const bookDelivery = receiver.arrivals.find(
      (arrival) => arrival.headers['x-service-event'] === 'money.in',
    )!;
    const keyEvent = verifyWebhook(
      keyDelivery.body,
      keyDelivery.headers['x-service-signature'],
      key.webhookSecret,
    );
    expect(keyEvent).toMatchObject({ event: 'invoice.paid', space_id: spaceId });
    expect(keyEvent.data?.invoice_id).toBe(id);
    const bookEvent = verifyWebhook(
      bookDelivery.body.toString('utf8'),
      bookDelivery.headers['x-service-signature'],
      subscriptionSecret,
    );
    expect(bookEvent).toMatchObject({ event: 'money.in', version: 1 });

    const changed = Buffer.from(keyDelivery.body.toString('utf8').replace('"total":"3"', '"total":"30"'));
    expect(() =>
      verifyWebhook(changed, keyDelivery.headers['x-service-signature'], key.webhookSecret),
    ).toThrow(TollbookWebhookError);
    expect(() =>
      verifyWebhook(keyDelivery.body, keyDelivery.headers['x-service-signature'], subscriptionSecret),
    ).toThrow(TollbookWebhookError);
    expect(() => verifyWebhook(keyDelivery.body, undefined, key.webhookSecret)).toThrow(TollbookWebhookError);
  });
});
