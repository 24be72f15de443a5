import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asAmount } from '../src/core/money.ts';
import { cardAmount } from '../src/features/card-payments/index.ts';
import { checkLedger } from '../src/features/ledger/index.ts';
import { ConfigError, loadConfig } from '../src/platform/config.ts';
import { createHarness, type Harness, type Key } from './harness.ts';
import {
  STRIPE_SECRET_KEY,
  STRIPE_WEBHOOK_SECRET,
  type StripeServer,
  startStripeServer,
  stripeEnv,
} from './stripe-server.ts';

// The card rail in production: Stripe Checkout through the real `stripe` SDK, pointed at a local
// Stripe-shaped server, and Stripe's webhooks signed with the SDK's own test-header helper.

let stripe: StripeServer;
let h: Harness;
beforeAll(async () => {
  stripe = await startStripeServer();
  h = await createHarness({ env: stripeEnv(stripe) });
});
afterAll(async () => {
  await h.close();
  await stripe.close();
});

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

async function request(key: Key, amount: string, currency = 'USD') {
  const account = await h.makeAccount(key.spaceId, { kind: 'bank', name: 'Bank', currency });
  const minted = await h.inject({
    method: 'POST',
    url: '/integration/payment-requests',
    key: key.key,
    payload: { account_id: account.id, amount, memo: 'Plan upgrade' },
  });
  expect(minted.statusCode, minted.body).toBe(201);
  const body = minted.json() as { id: string; token: string };
  return { ...body, accountId: account.id };
}

/** "Pay by card" as the page's form posts it: answers the session the payer is sent to. */
async function checkout(token: string) {
  const res = await h.inject({ method: 'POST', url: `/pay/${token}/checkout`, headers: FORM, payload: '' });
  expect(res.statusCode, res.body).toBe(303);
  const location = String(res.headers.location);
  const session = stripe.sessions.get(location.split('/c/pay/')[1] ?? '');
  expect(session, location).toBeDefined();
  return session!;
}

const deliver = (event: { payload: string; signature: string }) =>
  h.inject({
    method: 'POST',
    url: '/stripe/webhook',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': event.signature },
    payload: event.payload,
  });

const getRequest = async (key: Key, token: string) =>
  (await h.inject({ method: 'GET', url: `/integration/payment-requests/${token}`, key: key.key })).json();

const balanceOf = async (key: Key, accountId: string) => {
  const listed = await h.inject({ method: 'GET', url: '/integration/accounts?limit=100', key: key.key });
  const items = listed.json().items as { id: string; balance: string }[];
  return items.find((item) => item.id === accountId)?.balance;
};

const settlementsOf = (requestId: string) =>
  h.db.selectFrom('settlements').selectAll().where('payment_request_id', '=', requestId).execute();

const refundEntries = (spaceId: string) =>
  h.db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('cause_type', '=', 'refund')
    .execute();

describe('the pay page with Stripe configured', () => {
  it('offers "Pay by card" (not the test card) and opens a Checkout Session for the open amount', async () => {
    const { key, spaceId } = await h.world({ scopes: ['payments', 'accounts'] });
    const pr = await request(key, '12.34');
    const page = await h.inject({ method: 'GET', url: `/pay/${pr.token}` });
    expect(page.body).toContain('id="pay-by-card"');
    expect(page.body).not.toContain('id="card-form"');
    expect(page.headers['content-security-policy']).toContain(`form-action 'self' ${stripe.url}`);
    const session = await checkout(pr.token);
    expect(session).toMatchObject({
      mode: 'payment',
      amount_total: 1234,
      currency: 'usd',
      client_reference_id: pr.id,
      metadata: {
        tollbook_space_id: spaceId,
        tollbook_payment_request_id: pr.id,
        tollbook_amount: '12.34000000',
      },
      payment_intent_data_sent: { metadata: { tollbook_payment_request_id: pr.id } },
    });
    expect(session.line_items_sent).toMatchObject({
      0: {
        quantity: '1',
        price_data: { currency: 'usd', unit_amount: '1234', product_data: { name: 'Plan upgrade' } },
      },
    });
    // The bearer token of the page never goes to Stripe's dashboard, only the return addresses.
    expect(JSON.stringify(session.metadata)).not.toContain(pr.token);
    expect(session.success_url).toBe(`http://localhost:8080/pay/${pr.token}?card=returned`);
    // A second click sends the same idempotency key: the same session, one row.
    const again = await checkout(pr.token);
    expect(again.id).toBe(session.id);
    const rows = await h.db
      .selectFrom('card_checkouts')
      .selectAll()
      .where('payment_request_id', '=', pr.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'open', currency: 'USD', amount: '12.34000000' });
    expect(String(rows[0]!.amount_minor)).toBe('1234');
    expect(await settlementsOf(pr.id)).toEqual([]);
  });

  it('opens one session for many clicks at once', async () => {
    const { key } = await h.world({ scopes: ['payments', 'accounts'] });
    const pr = await request(key, '7.5');
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        h.inject({ method: 'POST', url: `/pay/${pr.token}/checkout`, headers: FORM, payload: '' }),
      ),
    );
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(6).fill(303));
    expect(new Set(answers.map((answer) => answer.headers.location)).size).toBe(1);
    const rows = await h.db
      .selectFrom('card_checkouts')
      .select('session_id')
      .where('payment_request_id', '=', pr.id)
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('charges zero-decimal currencies in whole units (JPY 1500 is 1500, not 150000)', async () => {
    const { key } = await h.world({ scopes: ['payments', 'accounts'] });
    const pr = await request(key, '1500', 'JPY');
    expect(await checkout(pr.token)).toMatchObject({ amount_total: 1500, currency: 'jpy' });
  });

  it('offers no card for an amount the currency cannot carry, or a currency cards do not take, and refuses to open one', async () => {
    const { key } = await h.world({ scopes: ['payments', 'accounts'] });
    for (const [amount, currency] of [
      ['12.345', 'USD'],
      ['0.1', 'JPY'],
      ['0.20', 'USD'],
      ['5', 'USDC'],
    ] as const) {
      const pr = await request(key, amount, currency);
      const page = await h.inject({ method: 'GET', url: `/pay/${pr.token}` });
      expect(page.body, `${amount} ${currency}`).not.toContain('id="pay-by-card"');
      expect(page.body).not.toContain('id="card-form"');
      const res = await h.inject({
        method: 'POST',
        url: `/pay/${pr.token}/checkout`,
        headers: FORM,
        payload: '',
      });
      expect(res.statusCode).toBe(422);
      expect(res.body).toContain('id="card-problem"');
    }
    expect(cardAmount('USD', asAmount(1_234_000_000n))).toEqual({ ok: true, currency: 'usd', minor: 1234n });
    expect(cardAmount('USD', asAmount(1_234_567_800n)).ok).toBe(false);
    // Stripe's ceiling: eight digits of the minor unit.
    expect(cardAmount('USD', asAmount(99_999_999n * 1_000_000n)).ok).toBe(true);
    expect(cardAmount('USD', asAmount(100_000_000_000_000n)).ok).toBe(false);
  });

  it('answers an unknown token with 404 and a paid request with 409, opening no session', async () => {
    const missing = await h.inject({
      method: 'POST',
      url: '/pay/pr_nothing/checkout',
      headers: FORM,
      payload: '',
    });
    expect(missing.statusCode).toBe(404);
    const { key } = await h.world({ scopes: ['payments', 'accounts'] });
    const pr = await request(key, '3');
    const { event } = stripe.pay((await checkout(pr.token)).id);
    await deliver(event);
    const sessionsBefore = stripe.sessions.size;
    const paid = await h.inject({
      method: 'POST',
      url: `/pay/${pr.token}/checkout`,
      headers: FORM,
      payload: '',
    });
    expect(paid.statusCode).toBe(409);
    expect(paid.body).toContain('takes no more payments');
    expect(stripe.sessions.size).toBe(sessionsBefore);
    expect((await h.inject({ method: 'GET', url: `/pay/${pr.token}` })).body).not.toContain(
      'id="pay-by-card"',
    );
  });
});

describe('POST /stripe/webhook', () => {
  it('settles the request through the one settlement function once; a replayed event changes nothing', async () => {
    const { key, spaceId } = await h.world({ scopes: ['payments', 'accounts'] });
    const pr = await request(key, '12.34');
    const session = await checkout(pr.token);
    const { event } = stripe.pay(session.id);
    const first = await deliver(event);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toEqual({ received: true, duplicate: false, outcome: 'settled' });
    expect(await getRequest(key, pr.token)).toMatchObject({ status: 'paid', amount_received: '12.34000000' });
    const [settlement, ...more] = await settlementsOf(pr.id);
    expect(more).toEqual([]);
    expect(settlement).toMatchObject({
      rail: 'card',
      reference: session.payment_intent,
      amount: '12.34000000',
      payer: 'payer@example.com',
    });
    expect(await balanceOf(key, pr.accountId)).toBe('12.34000000');
    // Stripe retries the same event, and a replay of it arrives: nothing moves.
    const replays = await Promise.all([deliver(event), deliver(event), deliver(event)]);
    for (const replay of replays) expect(replay.json()).toMatchObject({ duplicate: true });
    // A second event for the same payment (async success) finds it settled.
    const late = await deliver(stripe.signedEvent('checkout.session.async_payment_succeeded', session));
    expect(late.json()).toMatchObject({ duplicate: false, outcome: 'already_settled' });
    expect(await settlementsOf(pr.id)).toHaveLength(1);
    expect(await balanceOf(key, pr.accountId)).toBe('12.34000000');
    const moneyIn = await h.db
      .selectFrom('outbox_events')
      .select('event')
      .where('space_id', '=', spaceId)
      .where('event', '=', 'money.in')
      .execute();
    expect(moneyIn).toHaveLength(1);
    expect((await checkLedger(h.db, spaceId)).sound).toBe(true);
  });

  it('settles exactly once when the same event arrives many times at once', async () => {
    const { key } = await h.world({ scopes: ['payments', 'accounts'] });
    const pr = await request(key, '40');
    const session = await checkout(pr.token);
    const { event } = stripe.pay(session.id);
    const answers = await Promise.all(Array.from({ length: 8 }, () => deliver(event)));
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(8).fill(200));
    expect(answers.filter((answer) => answer.json().duplicate === false)).toHaveLength(1);
    expect(await settlementsOf(pr.id)).toHaveLength(1);
    expect(await balanceOf(key, pr.accountId)).toBe('40.00000000');
  });

  it('refuses a forged, re-signed, tampered or unsigned event with 400 and changes nothing', async () => {
    const { key } = await h.world({ scopes: ['payments', 'accounts'] });
    const pr = await request(key, '25');
    const session = await checkout(pr.token);
    const { event } = stripe.pay(session.id);
    const forged = stripe.signedEvent('checkout.session.completed', session, 'whsec_notTheEndpointSecret123');
    const tampered = {
      payload: event.payload.replace('"amount_total": 2500', '"amount_total": 250000'),
      signature: event.signature,
    };
    expect(tampered.payload).not.toBe(event.payload);
    const attempts = [
      forged,
      tampered,
      { payload: event.payload, signature: '' },
      { payload: event.payload, signature: 't=1,v1=00' },
      // An old signature replayed past Stripe's five-minute tolerance.
      { payload: event.payload, signature: event.signature.replace(/t=\d+/, 't=1000000000') },
    ];
    for (const attempt of attempts) {
      const res = await deliver(attempt);
      expect(res.statusCode, attempt.signature).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_signature' });
    }
    expect(await getRequest(key, pr.token)).toMatchObject({
      status: 'active',
      amount_received: '0.00000000',
    });
    expect(await settlementsOf(pr.id)).toEqual([]);
    expect(
      await h.db
        .selectFrom('stripe_events')
        .select('event_id')
        .where('event_id', '=', JSON.parse(event.payload).id)
        .execute(),
    ).toEqual([]);
    // The genuine event still settles afterwards.
    expect((await deliver(event)).json()).toMatchObject({ outcome: 'settled' });
  });

  it('records a refund as a reversal in the ledger, once, and a later refund for the rest', async () => {
    const { key, spaceId } = await h.world({ scopes: ['payments', 'accounts'] });
    const pr = await request(key, '12.34');
    const session = await checkout(pr.token);
    const { charge, event } = stripe.pay(session.id);
    await deliver(event);
    const partial = stripe.refund(charge.id, 500);
    expect((await deliver(partial.charged)).json()).toMatchObject({ outcome: 'refunded' });
    expect(await balanceOf(key, pr.accountId)).toBe('7.34000000');
    // The same refund told again (replay, and Stripe's refund.created for it) books nothing more.
    expect((await deliver(partial.charged)).json()).toMatchObject({ duplicate: true });
    expect((await deliver(partial.created)).json()).toMatchObject({ outcome: 'refund_already_booked' });
    expect(await balanceOf(key, pr.accountId)).toBe('7.34000000');
    const rest = stripe.refund(charge.id, 734);
    // This time refund.created arrives first: the rail reads the charge's refunded total from Stripe.
    expect((await deliver(rest.created)).json()).toMatchObject({ outcome: 'refunded' });
    expect((await deliver(rest.charged)).json()).toMatchObject({ outcome: 'refund_already_booked' });
    expect(await balanceOf(key, pr.accountId)).toBe('0.00000000');
    const entries = await refundEntries(spaceId);
    expect(entries).toHaveLength(2);
    // The sale happened; the request stays paid and its settlement stays as it was.
    expect(await getRequest(key, pr.token)).toMatchObject({ status: 'paid' });
    const out = await h.db
      .selectFrom('outbox_events')
      .select('payload')
      .where('space_id', '=', spaceId)
      .where('event', '=', 'money.out')
      .execute();
    expect(out.map((row) => (row.payload as { amount: string }).amount).sort()).toEqual([
      '5.00000000',
      '7.34000000',
    ]);
    expect((await checkLedger(h.db, spaceId)).sound).toBe(true);
  });

  it('books a card payment that lands after the request was paid another way (overpaid, never dropped)', async () => {
    const { key, spaceId } = await h.world({ scopes: ['payments', 'accounts'] });
    const pr = await request(key, '10');
    const session = await checkout(pr.token);
    // The payer also paid by another rail while Checkout was open (the development test card here).
    const other = await h.inject({
      method: 'POST',
      url: `/pay/${pr.token}/card`,
      payload: { number: '4242424242424242', exp: '12/34', cvc: '123' },
    });
    expect(other.json()).toMatchObject({ status: 'paid' });
    const { event } = stripe.pay(session.id);
    expect((await deliver(event)).json()).toMatchObject({ outcome: 'settled' });
    expect(await getRequest(key, pr.token)).toMatchObject({ status: 'paid', amount_received: '20.00000000' });
    expect(await balanceOf(key, pr.accountId)).toBe('20.00000000');
    expect((await checkLedger(h.db, spaceId)).sound).toBe(true);
  });

  it('refunds a USD card payment into a USDC account through the peg, and the ledger stays balanced', async () => {
    const { key, spaceId } = await h.world({ scopes: ['payments', 'accounts'] });
    const wallet = await h.makeWallet(key.spaceId);
    const minted = await h.inject({
      method: 'POST',
      url: '/integration/payment-requests',
      key: key.key,
      payload: { account_id: wallet.id, amount: '10', currency: 'USD' },
    });
    expect(minted.statusCode, minted.body).toBe(201);
    const session = await checkout(minted.json().token);
    expect(session).toMatchObject({ amount_total: 1000, currency: 'usd' });
    const { charge, event } = stripe.pay(session.id);
    await deliver(event);
    expect(await balanceOf(key, wallet.id)).toBe('10.00000000');
    expect((await deliver(stripe.refund(charge.id, 250).charged)).json()).toMatchObject({
      outcome: 'refunded',
    });
    expect(await balanceOf(key, wallet.id)).toBe('7.50000000');
    expect((await checkLedger(h.db, spaceId)).sound).toBe(true);
  });

  it('answers a body that is not JSON with 415 and one over the size limit with 413, booking nothing', async () => {
    const text = await h.inject({
      method: 'POST',
      url: '/stripe/webhook',
      headers: { 'content-type': 'text/plain', 'stripe-signature': 't=1,v1=00' },
      payload: 'hello',
    });
    expect(text.statusCode).toBe(415);
    const { payload, signature } = stripe.signedEvent('customer.created', {
      id: 'cus_big',
      note: 'x'.repeat(300_000),
    });
    const big = await h.inject({
      method: 'POST',
      url: '/stripe/webhook',
      headers: { 'content-type': 'application/json', 'stripe-signature': signature },
      payload,
    });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ error: 'payload_too_large' });
  });

  it('acknowledges events it does not act on, and sessions it never opened, without booking anything', async () => {
    const ignored = await deliver(
      stripe.signedEvent('customer.created', { id: 'cus_1', object: 'customer' }),
    );
    expect(ignored.json()).toMatchObject({ outcome: 'ignored' });
    const stranger = await deliver(
      stripe.signedEvent('checkout.session.completed', {
        id: 'cs_test_stranger',
        object: 'checkout.session',
        payment_status: 'paid',
        amount_total: 100,
        currency: 'usd',
        payment_intent: 'pi_x',
      }),
    );
    expect(stranger.json()).toMatchObject({ outcome: 'unknown_session' });
  });
});

describe('an invoice paid by card', () => {
  it('opens Checkout from the invoice page; the paid event pays the invoice and fires invoice.paid once', async () => {
    const { key } = await h.world({ scopes: ['invoices', 'accounts'] });
    const account = await h.makeAccount(key.spaceId, { kind: 'bank', name: 'Bank', currency: 'EUR' });
    const created = await h.inject({
      method: 'POST',
      url: '/integration/invoices',
      key: key.key,
      payload: {
        account_id: account.id,
        client_name: 'Acme',
        currency: 'EUR',
        due_on: '2027-12-31',
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
    expect(created.statusCode, created.body).toBe(201);
    const invoice = created.json() as { id: string; url: string };
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/send`,
      key: key.key,
      payload: { via: 'none' },
    });
    const token = invoice.url.split('/i/')[1]!;
    const page = await h.inject({ method: 'GET', url: `/i/${token}` });
    expect(page.body).toContain('id="pay-invoice-card"');
    const opened = await h.inject({
      method: 'POST',
      url: `/i/${token}/pay?by=card`,
      headers: FORM,
      payload: '',
    });
    expect(opened.statusCode, opened.body).toBe(303);
    const session = stripe.sessions.get(String(opened.headers.location).split('/c/pay/')[1]!)!;
    expect(session).toMatchObject({ amount_total: 24000, currency: 'eur' });
    const { event } = stripe.pay(session.id);
    expect((await deliver(event)).json()).toMatchObject({ outcome: 'settled' });
    expect((await deliver(event)).json()).toMatchObject({ duplicate: true });
    const after = (
      await h.inject({ method: 'GET', url: `/integration/invoices/${invoice.id}`, key: key.key })
    ).json();
    expect(after).toMatchObject({ status: 'paid', paid_amount: '240.00000000' });
    expect(after.payments.map((payment: { via: string }) => payment.via)).toEqual(['card']);
    const paidEvents = await h.db
      .selectFrom('outbox_events')
      .select('channel')
      .where('space_id', '=', key.spaceId)
      .where('event', '=', 'invoice.paid')
      .execute();
    expect(paidEvents.map((event) => event.channel).sort()).toEqual(['book', 'key']);
    const closed = await h.inject({ method: 'GET', url: `/i/${token}` });
    expect(closed.body).not.toContain('id="pay-invoice-card"');
  });
});

describe('without Stripe keys', () => {
  it('production offers no card at all, and the webhook route does not exist', async () => {
    const prod = await createHarness({ env: { NODE_ENV: 'production', MASTER_KEY: 'a'.repeat(64) } });
    try {
      const { key } = await prod.world({ scopes: ['payments'] });
      const account = await prod.makeAccount(key.spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
      const minted = await prod.inject({
        method: 'POST',
        url: '/integration/payment-requests',
        key: key.key,
        payload: { account_id: account.id, amount: '10' },
      });
      const token = minted.json().token as string;
      const page = await prod.inject({ method: 'GET', url: `/pay/${token}` });
      expect(page.statusCode).toBe(200);
      expect(page.body).not.toContain('id="rail-card"');
      expect(
        (await prod.inject({ method: 'POST', url: `/pay/${token}/checkout`, headers: FORM, payload: '' }))
          .statusCode,
      ).toBe(404);
      expect((await prod.inject({ method: 'POST', url: '/stripe/webhook', payload: {} })).statusCode).toBe(
        404,
      );
    } finally {
      await prod.close();
    }
  });

  it('checks the Stripe settings at start', () => {
    const base = { NODE_ENV: 'test' };
    expect(loadConfig(base).stripe).toBeUndefined();
    expect(() => loadConfig({ ...base, STRIPE_SECRET_KEY })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, STRIPE_WEBHOOK_SECRET })).toThrow(/go together/);
    expect(() =>
      loadConfig({ ...base, STRIPE_SECRET_KEY: 'pk_test_abcdefgh12345678', STRIPE_WEBHOOK_SECRET }),
    ).toThrow(/secret or restricted/);
    expect(() => loadConfig({ ...base, STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET: 'nope' })).toThrow(/whsec_/);
    const production = {
      NODE_ENV: 'production',
      MASTER_KEY: 'a'.repeat(64),
      STRIPE_SECRET_KEY,
      STRIPE_WEBHOOK_SECRET,
    };
    expect(loadConfig(production).stripe).toEqual({
      secretKey: STRIPE_SECRET_KEY,
      webhookSecret: STRIPE_WEBHOOK_SECRET,
      apiUrl: undefined,
    });
    expect(() => loadConfig({ ...production, STRIPE_API_URL: 'http://127.0.0.1:1' })).toThrow(
      /refused when NODE_ENV=production/,
    );
  });
});
