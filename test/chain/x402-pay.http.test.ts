import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startX402World, type X402World } from './x402-setup.ts';

// A machine pays a payment page with the official x402 client, on anvil.

let w: X402World;
beforeAll(async () => {
  w = await startX402World();
});
afterAll(() => w?.close());

const json = { accept: 'application/json' };

describe('the x402 quote on a payment page', () => {
  it('answers 402 with PAYMENT-REQUIRED: the token, the proven address, the exact base units, the EIP-712 domain', async () => {
    const s = await w.seller();
    const request = await w.mint(s.key.key, '2.5', {
      account_id: s.account.id,
      resource: 'https://api.example.com/v1/report',
    });
    const res = await fetch(request.url, { headers: json });
    expect(res.status).toBe(402);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('access-control-expose-headers')).toContain('PAYMENT-REQUIRED');
    const quote = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    expect(await res.json()).toEqual(quote);
    expect(quote).toMatchObject({
      x402Version: 2,
      resource: { url: 'https://api.example.com/v1/report', description: 'Paid call' },
    });
    expect(quote.accepts).toEqual([
      {
        scheme: 'exact',
        network: 'eip155:31337',
        asset: w.token.address,
        amount: '2500000',
        payTo: s.address,
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin (Tollbook test)', version: '2' },
      },
    ]);
  });
});

describe('CORS for browser payers', () => {
  it('lets another origin send PAYMENT-SIGNATURE and read PAYMENT-REQUIRED and PAYMENT-RESPONSE', async () => {
    const s = await w.seller();
    const request = await w.mint(s.key.key, '2', { account_id: s.account.id });
    const preflight = await fetch(request.url, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://agent.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'payment-signature',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('PAYMENT-SIGNATURE');
    const quote = await fetch(request.url, { headers: { ...json, origin: 'https://agent.example' } });
    expect(quote.headers.get('access-control-allow-origin')).toBe('*');
    expect(quote.headers.get('access-control-expose-headers')).toBe('PAYMENT-REQUIRED, PAYMENT-RESPONSE');
  });
});

describe('paying with @x402/fetch', () => {
  it('moves the exact amount on chain with gas from the gas wallet, pays the request and files it under the resource', async () => {
    const s = await w.seller();
    const request = await w.mint(s.key.key, '3.25', {
      account_id: s.account.id,
      resource: 'https://api.example.com/v1/report',
    });
    const payer = await w.payer(10_000_000n);
    const gasBefore = await w.local.publicClient.getBalance({ address: w.chain.gasWallet! });
    const payerEthBefore = await w.local.publicClient.getBalance({ address: payer.address });
    const res = await w.payingFetch(payer)(request.url, { headers: json });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ id: request.id, status: 'paid', amount_received: '3.25000000' });
    const settled = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(settled).toMatchObject({ success: true, network: 'eip155:31337', payer: payer.address });
    // The chain moved exactly 3.25 USDC from the payer to the seller, in one transaction the gas wallet sent.
    expect(await w.usdcOf(payer.address)).toBe(6_750_000n);
    expect(await w.usdcOf(s.address)).toBe(3_250_000n);
    const tx = await w.local.publicClient.getTransaction({ hash: settled.transaction as `0x${string}` });
    expect(tx.from.toLowerCase()).toBe(w.chain.gasWallet!.toLowerCase());
    expect(await w.local.publicClient.getBalance({ address: payer.address })).toBe(payerEthBefore);
    expect(await w.local.publicClient.getBalance({ address: w.chain.gasWallet! })).toBeLessThan(gasBefore);
    // The books: one x402 settlement with the tx hash, income under the endpoint's card.
    const row = await w.h.db
      .selectFrom('settlements')
      .selectAll()
      .where('payment_request_id', '=', request.id)
      .execute();
    expect(row).toHaveLength(1);
    expect(row[0]).toMatchObject({
      rail: 'x402',
      reference: `eip155:31337:${settled.transaction}`,
      payer: payer.address,
    });
    // Written with the booking's entry, in its one statement: the claim marked settled with the
    // hash, and the money.in and payment_request.paid events naming that entry.
    const claim = await w.h.db
      .selectFrom('x402_settlements')
      .select(['status', 'tx_hash', 'settled_at'])
      .where('payment_request_id', '=', request.id)
      .executeTakeFirstOrThrow();
    expect(claim).toMatchObject({ status: 'settled', tx_hash: settled.transaction });
    expect(claim.settled_at?.getTime()).toBe(row[0]!.settled_at.getTime());
    const events = await w.h.db
      .selectFrom('outbox_events')
      .select(['event', 'payload'])
      .where('space_id', '=', s.spaceId)
      .where('event', 'in', ['money.in', 'payment_request.paid'])
      .execute();
    expect(events.map((event) => event.event).sort()).toEqual(['money.in', 'payment_request.paid']);
    const moneyIn = events.find((event) => event.event === 'money.in')!;
    expect(moneyIn.payload).toMatchObject({ transaction_id: row[0]!.entry_id });
    const again = await w.api('GET', `/integration/payment-requests/${request.token}`, s.key.key);
    expect(again.body).toMatchObject({ status: 'paid', resource_id: expect.any(String) });
  });
});
