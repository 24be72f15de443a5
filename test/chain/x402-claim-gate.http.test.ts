import { randomUUID } from 'node:crypto';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/platform/crypto.ts';
import type { Queryable } from '../../src/platform/db/database.ts';
import { untilBlockedBehind } from '../support/lock-waits.ts';
import {
  type Authorization,
  type Body,
  encodePayment,
  type Requirement,
  startX402World,
  type X402World,
} from './x402-setup.ts';

// A page payment commits its claim before the scheme settles. So nothing reaches the chain before
// the claim is committed (a crash during the broadcast stays recoverable), and a claim another
// call holds means this call broadcasts nothing at all.

const postgres = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== '';

let w: X402World;
beforeAll(async () => {
  w = await startX402World();
});
afterAll(() => w?.close());

const json = { accept: 'application/json' };

async function signed(amount: string) {
  const s = await w.seller();
  const request = await w.mint(s.key.key, amount, { account_id: s.account.id });
  const quote = await fetch(request.url, { headers: json });
  const requirement = decodePaymentRequiredHeader(quote.headers.get('payment-required')!)
    .accepts[0] as Requirement;
  const payer = await w.payer(10_000_000n);
  const payload = await w.authorize(payer, requirement);
  return { s, request, requirement, payer, payload };
}

/** The claim row another call would have written for this payload (pending, lease running). */
function claimOf(ctx: Awaited<ReturnType<typeof signed>>) {
  const { authorization, signature } = ctx.payload.payload as {
    authorization: Authorization;
    signature: string;
  };
  const now = new Date();
  return {
    id: randomUUID(),
    space_id: ctx.s.key.spaceId,
    payment_request_id: ctx.request.id,
    via: 'page' as const,
    network: ctx.requirement.network,
    asset: ctx.requirement.asset.toLowerCase(),
    payer: authorization.from.toLowerCase(),
    pay_to: ctx.requirement.payTo.toLowerCase(),
    nonce: authorization.nonce.toLowerCase(),
    amount_base: ctx.requirement.amount,
    resource_url: null,
    signature_hash: sha256Hex(signature.toLowerCase()),
    status: 'pending' as const,
    tx_hash: null,
    error_reason: null,
    lease_until: new Date(now.getTime() + 60_000),
    created_at: now,
    settled_at: null,
  };
}

async function pay(url: string, payload: unknown) {
  const res = await fetch(url, { headers: { ...json, 'payment-signature': encodePayment(payload) } });
  return { status: res.status, body: (await res.json()) as Body };
}

describe('the claim gates the broadcast', () => {
  // PostgreSQL only: embedded PGlite runs one statement at a time on its one connection, so the
  // page's claim cannot wait on another transaction's lock there (it waits for the connection).
  it.skipIf(!postgres)(
    'broadcasts nothing while the claim is not committed, then settles once it is',
    async () => {
      const ctx = await signed('2');
      const nonceBefore = await w.gasNonce();
      // Another transaction writes the same authorization's claim and keeps it uncommitted: the
      // page's claim insert waits on it, and nothing may reach the chain meanwhile.
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let written!: (tx: Queryable) => void;
      const inserted = new Promise<Queryable>((resolve) => {
        written = resolve;
      });
      const blocker = w.h.db
        .transaction()
        .execute(async (tx) => {
          await tx.insertInto('x402_settlements').values(claimOf(ctx)).execute();
          written(tx);
          await held;
          throw new Error('rolled back on purpose');
        })
        .catch(() => undefined);
      const holder = await inserted;
      const paying = pay(ctx.request.url, ctx.payload);
      await untilBlockedBehind(holder);
      expect(await w.gasNonce()).toBe(nonceBefore);
      expect(await w.usdcOf(ctx.payer.address)).toBe(10_000_000n);
      release();
      await blocker;
      const paid = await paying;
      expect(paid.status, JSON.stringify(paid.body)).toBe(200);
      expect(paid.body.status).toBe('paid');
      expect(await w.gasNonce()).toBe(nonceBefore + 1);
      expect(await w.usdcOf(ctx.payer.address)).toBe(8_000_000n);
    },
  );

  it('broadcasts nothing, and changes nothing, when another call holds the claim', async () => {
    const ctx = await signed('2');
    const held = claimOf(ctx);
    await w.h.db.insertInto('x402_settlements').values(held).execute();
    const nonceBefore = await w.gasNonce();
    const answer = await pay(ctx.request.url, ctx.payload);
    expect(answer.status).toBe(409);
    expect(answer.body.error).toBe('conflict');
    expect(await w.gasNonce()).toBe(nonceBefore);
    expect(await w.usdcOf(ctx.payer.address)).toBe(10_000_000n);
    const claims = await w.h.db
      .selectFrom('x402_settlements')
      .select(['id', 'status'])
      .where('payment_request_id', '=', ctx.request.id)
      .execute();
    expect(claims).toEqual([{ id: held.id, status: 'pending' }]);
    const request = await w.h.db
      .selectFrom('payment_requests')
      .select(['status', 'amount_received'])
      .where('id', '=', ctx.request.id)
      .executeTakeFirstOrThrow();
    expect(request.status).toBe('active');
  });
});
