import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { sql } from 'kysely';
import type { Hash } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Body, encodePayment, type Requirement, startX402World, type X402World } from './x402-setup.ts';

// The gas wallet's lanes on anvil: four lanes share the settlements, a stuck transaction is
// replaced at its nonce, and a settlement the chain has not confirmed in time is finished when
// the payer presents the same payment again.

let w: X402World;
beforeAll(async () => {
  // A stuck transaction is replaced after a second; a payer waits three for a receipt.
  w = await startX402World({ GAS_REPLACE_AFTER_SECONDS: '1', SETTLEMENT_WAIT_SECONDS: '3' });
}, 240_000);
afterAll(() => w?.close());

const json = { accept: 'application/json' };
const rpc = (method: string, params: unknown[] = []) =>
  w.local.publicClient.request({ method, params } as never) as Promise<unknown>;

/** A seller's request of `amount` and a signed payment for it from a funded payer. */
async function signedPayment(amount = '2.00') {
  const s = await w.seller();
  const request = await w.mint(s.key.key, amount, { account_id: s.account.id });
  const payer = await w.payer(10_000_000n);
  const quote = await fetch(request.url, { headers: json });
  const required = decodePaymentRequiredHeader(quote.headers.get('payment-required')!);
  const payload = await w.authorize(payer, required.accepts[0] as Requirement);
  return { s, request, payer, header: encodePayment(payload) };
}

const pay = async (url: string, header: string) => {
  const res = await fetch(url, { headers: { ...json, 'payment-signature': header } });
  return { status: res.status, body: (await res.json()) as Body, headers: res.headers };
};

/** Presents the same payment until it has a final answer (409 while it settles, then 200). */
async function payUntilFinal(url: string, header: string) {
  for (;;) {
    const answer = await pay(url, header);
    if (answer.status !== 409 || answer.body.error !== 'conflict') return answer;
  }
}

/**
 * Waits until the payer's settlement transactions number `count`; answers them, oldest first.
 * They are told apart by the payer's address in their call data: on PostgreSQL other test files
 * settle on their own anvils through the same lane addresses, into the same table.
 */
async function broadcastsUntil(count: number, payer: string) {
  const payerInData = `%${payer.slice(2).toLowerCase()}%`;
  for (;;) {
    const rows = await w.h.db
      .selectFrom('x402_broadcasts')
      .selectAll()
      .where(sql<string>`lower(data)`, 'like', payerInData)
      .orderBy('created_at')
      .orderBy('max_fee_per_gas')
      .execute();
    if (rows.length >= count) return rows;
    // Polled until the state appears (each look is a database read).
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function settlementsOf(requestId: string) {
  return w.h.db.selectFrom('settlements').selectAll().where('payment_request_id', '=', requestId).execute();
}

describe('a stuck settlement transaction', () => {
  it('is replaced at the same nonce with fees raised by at least 12.5 %; one settlement is booked, with the hash that mined', async () => {
    const { request, header, payer } = await signedPayment();
    await rpc('evm_setAutomine', [false]);
    let first: Awaited<ReturnType<typeof pay>>;
    try {
      const paying = pay(request.url, header);
      const [stuck, replacement] = await broadcastsUntil(2, payer.address);
      expect(replacement!.first_hash).toBe(stuck!.tx_hash);
      expect(replacement!.nonce).toBe(stuck!.nonce);
      expect(replacement!.lane).toBe(stuck!.lane);
      expect(BigInt(replacement!.max_fee_per_gas) * 8n).toBeGreaterThanOrEqual(
        BigInt(stuck!.max_fee_per_gas) * 9n,
      );
      expect(BigInt(replacement!.max_priority_fee_per_gas) * 8n).toBeGreaterThanOrEqual(
        BigInt(stuck!.max_priority_fee_per_gas) * 9n,
      );
      first = await paying;
    } finally {
      await rpc('evm_mine');
      await rpc('evm_setAutomine', [true]);
    }
    const final = first.status === 200 ? first : await payUntilFinal(request.url, header);
    expect(final.status, JSON.stringify(final.body)).toBe(200);
    const settled = decodePaymentResponseHeader(final.headers.get('payment-response')!);
    const rows = await w.h.db
      .selectFrom('x402_broadcasts')
      .selectAll()
      .where('first_hash', '=', (await broadcastsUntil(1, payer.address))[0]!.tx_hash)
      .execute();
    // Every transaction of the settlement shares one nonce; exactly one of them mined.
    expect(new Set(rows.map((row) => row.nonce)).size).toBe(1);
    const receipts = await Promise.all(
      rows.map((row) =>
        w.local.publicClient.getTransactionReceipt({ hash: row.tx_hash as Hash }).then(
          (receipt) => receipt.transactionHash,
          () => undefined,
        ),
      ),
    );
    const mined = receipts.filter((hash) => hash !== undefined);
    expect(mined).toEqual([settled.transaction]);
    expect(settled.transaction).not.toBe(rows[0]!.tx_hash);
    const booked = await settlementsOf(request.id);
    expect(booked.map((row) => row.reference)).toEqual([`eip155:31337:${settled.transaction}`]);
  }, 120_000);
});

describe('settlement_pending', () => {
  it('answers 409 settlement_pending, broadcasts nothing more for the same payment, then gives the final answer to the same payload', async () => {
    const { request, header, payer } = await signedPayment();
    await rpc('evm_setAutomine', [false]);
    try {
      const pending = await pay(request.url, header);
      expect(pending.status, JSON.stringify(pending.body)).toBe(409);
      expect(pending.body.details).toMatchObject({ status: 'settlement_pending' });
      const firstHash = pending.body.details.tx_hash as string;
      const [stuck] = await broadcastsUntil(1, payer.address);
      expect(stuck!.tx_hash).toBe(firstHash.toLowerCase());
      // The same payment again while unconfirmed: still no final answer, and no new nonce.
      const again = await pay(request.url, header);
      expect(again.status).toBe(409);
      const rows = await w.h.db
        .selectFrom('x402_broadcasts')
        .selectAll()
        .where('first_hash', '=', firstHash)
        .execute();
      expect(new Set(rows.map((row) => `${row.lane}:${row.nonce}`)).size).toBe(1);
    } finally {
      await rpc('evm_mine');
      await rpc('evm_setAutomine', [true]);
    }
    const final = await payUntilFinal(request.url, header);
    expect(final.status, JSON.stringify(final.body)).toBe(200);
    expect(final.body).toMatchObject({ id: request.id, status: 'paid' });
    const settled = decodePaymentResponseHeader(final.headers.get('payment-response')!);
    expect(settled.success).toBe(true);
    expect((await settlementsOf(request.id)).map((row) => row.reference)).toEqual([
      `eip155:31337:${settled.transaction}`,
    ]);
  }, 120_000);
});

describe('four lanes', () => {
  it('settles 200 concurrent payments with no nonce error and no double settlement, on every lane', async () => {
    const s = await w.seller();
    const payer = await w.payer(500_000_000n);
    const nonceBefore = await w.gasNonce();
    // Requests and signatures are made 20 at a time (setup, not under test); the payments all at once.
    const requests: Awaited<ReturnType<typeof w.mint>>[] = [];
    const headers: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const made = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const request = await w.mint(s.key.key, '1.00', { account_id: s.account.id });
          const quote = await fetch(request.url, { headers: json });
          const required = decodePaymentRequiredHeader(quote.headers.get('payment-required')!);
          return {
            request,
            header: encodePayment(await w.authorize(payer, required.accepts[0] as Requirement)),
          };
        }),
      );
      requests.push(...made.map((entry) => entry.request));
      headers.push(...made.map((entry) => entry.header));
    }
    const answers = await Promise.all(requests.map((request, index) => pay(request.url, headers[index]!)));
    expect(answers.filter((answer) => answer.status !== 200).map((answer) => answer.body)).toEqual([]);
    const hashes = answers.map(
      (answer) => decodePaymentResponseHeader(answer.headers.get('payment-response')!).transaction as Hash,
    );
    expect(new Set(hashes).size).toBe(200);
    // Exactly 200 transactions left the gas wallet, spread over all four lanes.
    expect((await w.gasNonce()) - nonceBefore).toBe(200);
    const senders = await Promise.all(
      hashes.map(async (hash) => (await w.local.publicClient.getTransaction({ hash })).from.toLowerCase()),
    );
    expect(new Set(senders)).toEqual(new Set(w.chain.gasWallets.map((address) => address.toLowerCase())));
    expect(w.chain.gasWallets).toHaveLength(4);
    const booked = await w.h.db
      .selectFrom('settlements')
      .select(['payment_request_id', 'reference'])
      .where(
        'payment_request_id',
        'in',
        requests.map((request) => request.id),
      )
      .execute();
    expect(booked).toHaveLength(200);
    expect(new Set(booked.map((row) => row.reference)).size).toBe(200);
    expect(await w.usdcOf(s.address)).toBe(200_000_000n);
  }, 300_000);
});
