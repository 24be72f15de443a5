import { createHmac } from 'node:crypto';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSenders } from '../../src/features/webhooks/delivery-service.ts';
import { WebhookWorker } from '../../src/features/webhooks/worker.ts';
import { startReceiver } from '../webhook-receiver.ts';
import { type Body, encodePayment, type Requirement, startX402World, type X402World } from './x402-setup.ts';

// What a payment page refuses, and why, with nothing sent on chain; exactly one settlement per
// request under racing payers; the signed webhook of a settled payment.

let w: X402World;
beforeAll(async () => {
  w = await startX402World();
});
afterAll(() => w?.close());

const json = { accept: 'application/json' };

async function quoted(amount = '2') {
  const s = await w.seller();
  const request = await w.mint(s.key.key, amount, { account_id: s.account.id });
  const res = await fetch(request.url, { headers: json });
  const requirement = decodePaymentRequiredHeader(res.headers.get('payment-required')!)
    .accepts[0] as Requirement;
  return { s, request, requirement };
}

async function pay(url: string, payload: unknown) {
  const res = await fetch(url, { headers: { ...json, 'payment-signature': encodePayment(payload) } });
  const body = (await res.json()) as Body;
  return { status: res.status, body, headers: res.headers };
}

describe('refusals: a precise reason, and nothing on chain', () => {
  const cases: [string, (ctx: Awaited<ReturnType<typeof quoted>>) => Record<string, unknown>, string][] = [
    [
      'an expired authorization',
      () => ({ validBefore: String(Math.floor(Date.now() / 1000) - 10) }),
      'invalid_exact_evm_payload_authorization_valid_before',
    ],
    [
      'the wrong amount',
      (ctx) => ({ value: String(BigInt(ctx.requirement.amount) - 1n) }),
      'invalid_exact_evm_payload_authorization_value_mismatch',
    ],
    [
      'the wrong pay-to address',
      () => ({ to: '0x000000000000000000000000000000000000dEaD' }),
      'invalid_exact_evm_recipient_mismatch',
    ],
    ['the wrong EIP-712 domain name', () => ({ name: 'USDC' }), 'invalid_exact_evm_signature'],
    [
      'an authorization not valid yet',
      () => ({ validAfter: String(Math.floor(Date.now() / 1000) + 3600) }),
      'invalid_exact_evm_payload_authorization_valid_after',
    ],
  ];
  for (const [name, override, reason] of cases) {
    it(`refuses ${name} with 402 and ${reason}`, async () => {
      const ctx = await quoted();
      const payer = await w.payer(5_000_000n);
      const nonceBefore = await w.gasNonce();
      const answer = await pay(
        ctx.request.url,
        await w.authorize(payer, ctx.requirement, override(ctx) as never),
      );
      expect(answer.status).toBe(402);
      expect(answer.body.error).toMatch(new RegExp(`^${reason}: `));
      expect(decodePaymentRequiredHeader(answer.headers.get('payment-required')!).accepts).toHaveLength(1);
      expect(await w.gasNonce()).toBe(nonceBefore);
      expect(await w.usdcOf(payer.address)).toBe(5_000_000n);
      const record = await w.api('GET', `/integration/payment-requests/${ctx.request.token}`, ctx.s.key.key);
      expect(record.body.status).toBe('active');
    });
  }

  it('refuses a payer who does not hold the amount', async () => {
    const ctx = await quoted();
    const payer = await w.payer(1_000_000n);
    const nonceBefore = await w.gasNonce();
    const answer = await pay(ctx.request.url, await w.authorize(payer, ctx.requirement));
    expect(answer.status).toBe(402);
    expect(answer.body.error).toMatch(/^invalid_exact_evm_insufficient_balance: /);
    expect(await w.gasNonce()).toBe(nonceBefore);
  });

  it('refuses a payment for another network or token than the quote', async () => {
    const ctx = await quoted();
    const payer = await w.payer(5_000_000n);
    const other = { ...ctx.requirement, network: 'eip155:8453' };
    const answer = await pay(ctx.request.url, await w.authorize(payer, other));
    expect(answer.status).toBe(402);
    expect(answer.body.error).toMatch(/^no_matching_quote: /);
    const unknownAsset = { ...ctx.requirement, asset: '0x1111111111111111111111111111111111111111' };
    const second = await pay(ctx.request.url, await w.authorize(payer, unknownAsset));
    expect(second.status).toBe(402);
    expect(await w.usdcOf(payer.address)).toBe(5_000_000n);
  });

  it('refuses a garbled PAYMENT-SIGNATURE with 402 and the quote', async () => {
    const ctx = await quoted();
    const res = await fetch(ctx.request.url, {
      headers: { ...json, 'payment-signature': 'not base64 json' },
    });
    expect(res.status).toBe(402);
    expect(((await res.json()) as { error: string }).error).toMatch(/^invalid_payload: /);
  });

  it('offers no on-chain quote below the 1 USD floor: minting refuses it', async () => {
    const s = await w.seller();
    const res = await w.api('POST', '/integration/payment-requests', s.key.key, {
      account_id: s.account.id,
      amount: '0.99',
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'amount_not_accepted', details: { floor: '1' } });
  });

  it('quotes nothing for an address the space has not proven, and quotes it once proven', async () => {
    const { spaceId, key, owner } = await w.h.world();
    const signer = privateKeyToAccount(generatePrivateKey());
    const account = await w.h.makeWallet(spaceId, signer.address);
    const request = await w.mint(key.key, '2', { account_id: account.id });
    const accepts = async () => {
      const res = await fetch(request.url, { headers: json });
      expect(res.status).toBe(402);
      return decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts;
    };
    expect(await accepts()).toEqual([]);
    const url = `/app/api/spaces/${spaceId}/accounts/${account.id}/address-proof`;
    const { message } = (await w.h.inject({ method: 'POST', url, session: owner.token, payload: {} })).json();
    const signature = await signer.signMessage({ message });
    await w.h.inject({ method: 'POST', url, session: owner.token, payload: { signature } });
    expect(await accepts()).toEqual([expect.objectContaining({ payTo: signer.address, amount: '2000000' })]);
  });
});

describe('exactly one settlement per request', () => {
  it('settles one of two payers racing for the same request and refuses the other before the chain', async () => {
    const ctx = await quoted('4');
    const [first, second] = [await w.payer(10_000_000n), await w.payer(10_000_000n)];
    const payloads = [await w.authorize(first, ctx.requirement), await w.authorize(second, ctx.requirement)];
    const nonceBefore = await w.gasNonce();
    const answers = await Promise.all(payloads.map((payload) => pay(ctx.request.url, payload)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const refused = answers.find((answer) => answer.status === 409)!;
    expect(refused.body.error).toBe('request_not_payable');
    expect(await w.gasNonce()).toBe(nonceBefore + 1);
    const balances = [await w.usdcOf(first.address), await w.usdcOf(second.address)].sort((a, b) =>
      Number(a - b),
    );
    expect(balances).toEqual([6_000_000n, 10_000_000n]);
    expect(await w.usdcOf(ctx.s.address)).toBe(4_000_000n);
  });

  it('answers the paying client again with the same transaction, and refuses its signature on another request', async () => {
    const ctx = await quoted('2');
    const payer = await w.payer(10_000_000n);
    const payload = await w.authorize(payer, ctx.requirement);
    const paid = await pay(ctx.request.url, payload);
    expect(paid.status).toBe(200);
    const nonceAfter = await w.gasNonce();
    const again = await pay(ctx.request.url, payload);
    expect(again.status).toBe(200);
    expect(again.headers.get('payment-response')).toBe(paid.headers.get('payment-response'));
    // The same authorization (same amount and pay-to) offered for a second request of the seller.
    const other = await w.mint(ctx.s.key.key, '2', { account_id: ctx.s.account.id });
    const replay = await pay(other.url, payload);
    expect(replay.status).toBe(409);
    expect(replay.body.error).toBe('authorization_used');
    expect(await w.gasNonce()).toBe(nonceAfter);
    expect(await w.usdcOf(payer.address)).toBe(8_000_000n);
  });

  it('refuses a payment for a request already paid, or cancelled, with its state', async () => {
    const ctx = await quoted('2');
    const payer = await w.payer(10_000_000n);
    expect((await pay(ctx.request.url, await w.authorize(payer, ctx.requirement))).status).toBe(200);
    const late = await pay(ctx.request.url, await w.authorize(payer, ctx.requirement));
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ error: 'request_not_payable', details: { status: 'paid' } });
    expect(await w.usdcOf(payer.address)).toBe(8_000_000n);
  });
});

describe('the key webhook of a machine payment', () => {
  it('arrives signed with the transaction hash, payer, network and asset', async () => {
    const receiver = await startReceiver();
    try {
      const s = await w.seller({ webhook_url: receiver.url });
      const request = await w.mint(s.key.key, '1.5', {
        account_id: s.account.id,
        resource: 'https://api.example.com/v1/x',
      });
      const payer = await w.payer(5_000_000n);
      const res = await w.payingFetch(payer)(request.url, { headers: json });
      expect(res.status).toBe(200);
      const senders = createSenders({ allowPrivate: true, resolver: w.h.deps.resolver, timeoutMs: 2_000 });
      const worker = new WebhookWorker(
        { db: w.h.db, clock: w.h.clock, secrets: w.h.deps.secrets, senders },
        { spaceIds: [s.spaceId] },
      );
      await worker.runOnce();
      await Promise.all([senders.key.close(), senders.subscription.close()]);
      const arrival = receiver.arrivals.find(
        (item) => JSON.parse(item.body.toString()).event === 'payment_request.paid',
      );
      expect(arrival).toBeDefined();
      const event = JSON.parse(arrival!.body.toString());
      const settlement = await w.h.db
        .selectFrom('x402_settlements')
        .selectAll()
        .where('payment_request_id', '=', request.id)
        .executeTakeFirstOrThrow();
      expect(event.data).toMatchObject({
        payment_request_id: request.id,
        amount: '1.5',
        tx_hash: settlement.tx_hash,
        payer: payer.address,
        network: 'eip155:31337',
        asset: w.token.address,
      });
      const expected = `sha256=${createHmac('sha256', s.key.webhookSecret).update(arrival!.body).digest('hex')}`;
      expect(arrival!.headers['x-service-signature']).toBe(expected);
    } finally {
      await receiver.close();
    }
  });
});
