import { decodePaymentRequiredHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLedger } from '../../src/features/ledger/index.ts';
import { creditSeller, recordingFetch, signingOnly, signingPayer } from './x402-credit-setup.ts';
import { type Body, startX402World, type X402World } from './x402-setup.ts';

// An x402 resource paid from a prepaid credit: the 402 declares sign-in-with-x, the first call
// pays on chain and tops up the payer's credit, later calls sign in and are charged to it.

let w: X402World;
beforeAll(async () => {
  w = await startX402World();
});
afterAll(() => w?.close());

type Seller = Awaited<ReturnType<X402World['seller']>>;

/** The payer's credit in the seller's book, as the app API lists it (client_ref evm:<lowercase>). */
async function creditOf(s: Seller, address: string) {
  const res = await w.h.inject({
    method: 'GET',
    url: `/app/api/spaces/${s.spaceId}/client-credits`,
    session: s.owner.token,
  });
  const items = res.json().items as Body[];
  return items.find((item) => item.client_ref === `evm:${address.toLowerCase()}`);
}

async function chargesOf(spaceId: string) {
  return w.h.db.selectFrom('charges').selectAll().where('space_id', '=', spaceId).execute();
}

describe('an x402 resource paid from a credit through sign-in-with-x', () => {
  it('tops up the credit on the first payment, charges the next 20 signed-in calls to it with nothing on chain, refuses a replayed sign-in, and asks for a payment once the credit is spent', async () => {
    const s = await w.seller({ scopes: ['payments'] });
    const shop = await creditSeller(w, s, { price: '0.04', topUp: '1' });
    try {
      const payer = await w.payer(5_000_000n);
      const recorder = recordingFetch();
      const call = signingPayer(w, payer, recorder.fetch);

      const first = await call(shop.url);
      expect(first.status).toBe(200);
      expect(await first.json()).toEqual({ report: 'sunny' });
      expect(await w.usdcOf(payer.address)).toBe(4_000_000n);
      expect(await w.usdcOf(s.address)).toBe(1_000_000n);
      // The top-up of 1 USD, less the call it paid for.
      expect((await creditOf(s, payer.address))?.balance).toBe('0.96000000');

      const gasBefore = await w.gasNonce();
      const blockBefore = await w.local.publicClient.getBlockNumber();
      for (let i = 0; i < 20; i += 1) {
        const res = await call(shop.url);
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ report: 'sunny' });
      }
      expect((await creditOf(s, payer.address))?.balance).toBe('0.16000000');
      expect(await w.gasNonce()).toBe(gasBefore);
      expect(await w.local.publicClient.getBlockNumber()).toBe(blockBefore);
      expect(await w.usdcOf(payer.address)).toBe(4_000_000n);
      const charges = await chargesOf(s.spaceId);
      expect(charges).toHaveLength(21);
      expect(charges.every((row) => Number(row.amount) === 0.04)).toBe(true);
      expect((await checkLedger(w.h.db, s.spaceId)).sound).toBe(true);
      // The credit is an ordinary client credit: its public balance page shows what is left.
      const page = await fetch((await creditOf(s, payer.address))?.balance_url);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/0\.16/);

      // The 20 signed-in calls each signed a fresh challenge; sending one again is refused.
      expect(recorder.signIns.length).toBeGreaterThanOrEqual(20);
      const replay = await fetch(shop.url, { headers: { 'sign-in-with-x': recorder.signIns.at(-1)! } });
      expect(replay.status).toBe(403);
      expect((await creditOf(s, payer.address))?.balance).toBe('0.16000000');

      const signInOnly = signingOnly(payer);
      for (let i = 0; i < 4; i += 1) expect((await signInOnly(shop.url)).status).toBe(200);
      expect((await creditOf(s, payer.address))?.balance).toBe('0.00000000');
      const spent = await signInOnly(shop.url);
      expect(spent.status).toBe(402);
      const quote = decodePaymentRequiredHeader(spent.headers.get('payment-required')!);
      expect(quote.accepts).toHaveLength(1);
      expect(quote.accepts[0]).toMatchObject({ amount: '1000000', payTo: s.address });
      expect(quote.extensions?.['sign-in-with-x']).toBeDefined();
      expect(await chargesOf(s.spaceId)).toHaveLength(25);
      expect(await w.gasNonce()).toBe(gasBefore);

      // Back to x402: the next call pays on chain again and tops the credit up again.
      expect((await call(shop.url)).status).toBe(200);
      expect(await w.gasNonce()).toBe(gasBefore + 1);
      expect((await creditOf(s, payer.address))?.balance).toBe('0.96000000');
      expect((await checkLedger(w.h.db, s.spaceId)).sound).toBe(true);
    } finally {
      await shop.close();
    }
  });

  it('serves exactly as many concurrent signed-in calls as the credit covers, and never overdraws it', async () => {
    const s = await w.seller({ scopes: ['payments'] });
    const shop = await creditSeller(w, s, { price: '0.25', topUp: '1' });
    try {
      const payer = await w.payer(5_000_000n);
      expect((await signingPayer(w, payer)(shop.url)).status).toBe(200);
      expect((await creditOf(s, payer.address))?.balance).toBe('0.75000000');
      const signInOnly = signingOnly(payer);
      const answers = await Promise.all(Array.from({ length: 8 }, () => signInOnly(shop.url)));
      const statuses = answers.map((res) => res.status).sort();
      expect(statuses).toEqual([200, 200, 200, 402, 402, 402, 402, 402]);
      expect((await creditOf(s, payer.address))?.balance).toBe('0.00000000');
      expect(await chargesOf(s.spaceId)).toHaveLength(4);
      expect((await checkLedger(w.h.db, s.spaceId)).sound).toBe(true);
    } finally {
      await shop.close();
    }
  });

  it("refuses credit terms without the seller's key, or with a price above the payment, with nothing on chain", async () => {
    const s = await w.seller({ scopes: ['payments'] });
    const payer = await w.payer(5_000_000n);
    const settle = async (price: string, key?: string) => {
      const requirement = {
        scheme: 'exact',
        network: w.local.network.caip2,
        asset: w.token.address,
        amount: '1000000',
        payTo: s.address,
        maxTimeoutSeconds: 120,
        extra: { name: w.token.name, version: w.token.version, tollbookCredit: { price } },
      };
      const envelope = {
        x402Version: 2,
        paymentPayload: await w.authorize(payer, requirement),
        paymentRequirements: requirement,
      };
      const res = await fetch(`${w.base}/x402/settle`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify(envelope),
      });
      return (await res.json()) as Body;
    };
    const gasBefore = await w.gasNonce();
    expect(await settle('0.01')).toMatchObject({ success: false, errorReason: 'invalid_payload' });
    expect(await settle('2', s.key.key)).toMatchObject({ success: false, errorReason: 'invalid_payload' });
    expect(await w.gasNonce()).toBe(gasBefore);
    expect(await w.usdcOf(payer.address)).toBe(5_000_000n);
  });
});
