import { sql } from 'kysely';
import type { Address } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WatchDeps, watchOnce } from '../../src/features/chain-watch/index.ts';
import { fundedPayer, sendTokenTransfer, startWatchedWorld, type X402World } from './x402-setup.ts';

// The account watch on anvil: direct token transfers to a proven address fill its requests,
// oldest first; a restart neither loses nor doubles a transfer; confirmations are waited for;
// a reorganisation undoes what a dropped transfer booked.

let w: X402World;
let deps: WatchDeps;
let close: (() => Promise<void>) | undefined;
beforeAll(async () => {
  ({ w, deps, close } = await startWatchedWorld());
}, 600_000);
afterAll(() => close?.());

const transfer = (payer: PrivateKeyAccount, to: Address, baseUnits: bigint) =>
  sendTokenTransfer(w, payer, to, baseUnits);

const payerWith = (usdc: bigint) => fundedPayer(w, usdc);

/** Makes the watch fail when it moves its cursor, after it booked the range: a crash mid-range. */
async function crashOnCursorMove(on: boolean) {
  if (on) {
    await sql`CREATE OR REPLACE FUNCTION tollbook_test_crash() RETURNS trigger AS $$
      BEGIN RAISE EXCEPTION 'crash'; END $$ LANGUAGE plpgsql`.execute(w.h.db);
    await sql`CREATE TRIGGER tollbook_test_crash BEFORE UPDATE ON chain_cursors
      FOR EACH ROW EXECUTE FUNCTION tollbook_test_crash()`.execute(w.h.db);
  } else {
    await sql`DROP TRIGGER IF EXISTS tollbook_test_crash ON chain_cursors`.execute(w.h.db);
  }
}

/** Remembers the chain as it is now, to reorganise back to. */
const markChain = async () =>
  (await w.local.publicClient.request({ method: 'evm_snapshot' as never })) as string;

/** A reorganisation: the blocks since `snapshot` are replaced by two empty ones past the old height. */
async function reorganiseBackTo(snapshot: string) {
  await w.local.publicClient.request({ method: 'evm_revert' as never, params: [snapshot] as never });
  await w.local.publicClient.request({ method: 'anvil_mine' as never, params: ['0x2'] as never });
}

/**
 * The watch undoes a transfer on evidence seen twice, at heads at least one block apart: a round
 * that marks it, a block, and a round that reverses it. Answers the second round's report.
 */
async function watchTwoRoundsApart() {
  const first = await watchOnce(deps);
  expect(first[0]!.reversed).toBe(0);
  await w.local.publicClient.request({ method: 'anvil_mine' as never, params: ['0x1'] as never });
  return watchOnce(deps);
}

const record = async (key: string, token: string) =>
  (await w.api('GET', `/integration/payment-requests/${token}`, key)).body;

describe('the account watch', () => {
  it('takes a partial payment, then the rest: amount_received grows and the request is paid at the amount', async () => {
    const s = await w.seller();
    const request = await w.mint(s.key.key, '5', { account_id: s.account.id });
    const payer = await payerWith(10_000_000n);
    await transfer(payer, s.address, 2_000_000n);
    await watchOnce(deps);
    expect(await record(s.key.key, request.token)).toMatchObject({
      status: 'active',
      amount_received: '2.00000000',
    });
    await transfer(payer, s.address, 3_000_000n);
    await watchOnce(deps);
    expect(await record(s.key.key, request.token)).toMatchObject({
      status: 'paid',
      amount_received: '5.00000000',
    });
  });

  it('fills two requests on one address oldest first, and books what is left as income with no request', async () => {
    const s = await w.seller();
    const first = await w.mint(s.key.key, '2', { account_id: s.account.id });
    const second = await w.mint(s.key.key, '3', { account_id: s.account.id });
    const payer = await payerWith(10_000_000n);
    await transfer(payer, s.address, 6_500_000n);
    await watchOnce(deps);
    expect(await record(s.key.key, first.token)).toMatchObject({
      status: 'paid',
      amount_received: '2.00000000',
    });
    expect(await record(s.key.key, second.token)).toMatchObject({
      status: 'paid',
      amount_received: '3.00000000',
    });
    const row = await w.h.db
      .selectFrom('chain_transfers')
      .selectAll()
      .where('space_id', '=', s.spaceId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      source: 'watch',
      status: 'booked',
      payer: payer.address,
      remainder_entry_id: expect.any(String),
    });
    const accounts = await w.api('GET', '/integration/accounts', s.key.key);
    expect(accounts.body.items.find((item: { id: string }) => item.id === s.account.id).balance).toBe(
      '6.50000000',
    );
  });

  it('neither loses nor doubles a transfer across a restart in the middle of a range', async () => {
    const s = await w.seller();
    const request = await w.mint(s.key.key, '9', { account_id: s.account.id });
    const payer = await payerWith(10_000_000n);
    await transfer(payer, s.address, 1_000_000n);
    // A process dies after booking part of a range but before committing: the bookings and the
    // cursor go back together (here the crash is an error raised when the cursor moves).
    await crashOnCursorMove(true);
    try {
      await expect(watchOnce(deps)).rejects.toThrow('crash');
    } finally {
      await crashOnCursorMove(false);
    }
    expect(await record(s.key.key, request.token)).toMatchObject({ amount_received: '0.00000000' });
    await transfer(payer, s.address, 2_000_000n);
    await watchOnce(deps);
    await watchOnce(deps);
    expect(await record(s.key.key, request.token)).toMatchObject({ amount_received: '3.00000000' });
    const rows = await w.h.db
      .selectFrom('chain_transfers')
      .selectAll()
      .where('space_id', '=', s.spaceId)
      .execute();
    expect(rows).toHaveLength(2);
    // Rewinding the cursor (a replay of the same blocks) books nothing twice.
    await w.h.db.updateTable('chain_cursors').set({ next_block: 0 }).execute();
    await watchOnce(deps);
    expect(await record(s.key.key, request.token)).toMatchObject({ amount_received: '3.00000000' });
  });

  it('waits for the configured confirmations', async () => {
    const s = await w.seller();
    const request = await w.mint(s.key.key, '2', { account_id: s.account.id });
    const payer = await payerWith(10_000_000n);
    const deep = { ...deps, confirmations: { local: 3 } };
    await transfer(payer, s.address, 2_000_000n);
    await watchOnce(deep);
    expect(await record(s.key.key, request.token)).toMatchObject({ amount_received: '0.00000000' });
    await w.local.publicClient.request({ method: 'anvil_mine' as never, params: ['0x3'] as never });
    await watchOnce(deep);
    expect(await record(s.key.key, request.token)).toMatchObject({
      status: 'paid',
      amount_received: '2.00000000',
    });
  });

  it('does not book an x402 settlement a second time', async () => {
    const s = await w.seller();
    const open = await w.mint(s.key.key, '2', { account_id: s.account.id });
    const paid = await w.mint(s.key.key, '2', { account_id: s.account.id });
    const payer = await w.payer(10_000_000n);
    const res = await w.payingFetch(payer)(paid.url, { headers: { accept: 'application/json' } });
    expect(res.status).toBe(200);
    await watchOnce(deps);
    expect(await record(s.key.key, open.token)).toMatchObject({
      status: 'active',
      amount_received: '0.00000000',
    });
    const rows = await w.h.db
      .selectFrom('chain_transfers')
      .selectAll()
      .where('space_id', '=', s.spaceId)
      .execute();
    expect(rows.map((row) => row.source)).toEqual(['x402']);
  });
});

describe('reorganisations', () => {
  it('undoes a transfer that left the chain: the income shrinks and the request takes payments again', async () => {
    const s = await w.seller();
    const request = await w.mint(s.key.key, '4', { account_id: s.account.id });
    const payer = await payerWith(10_000_000n);
    const snapshot = await markChain();
    await transfer(payer, s.address, 4_000_000n);
    await watchOnce(deps);
    expect(await record(s.key.key, request.token)).toMatchObject({
      status: 'paid',
      amount_received: '4.00000000',
    });
    // The block with the transfer is replaced by others: revert, then mine past the old height.
    await reorganiseBackTo(snapshot);
    const report = await watchTwoRoundsApart();
    expect(report[0]!.reversed).toBe(1);
    expect(await record(s.key.key, request.token)).toMatchObject({
      status: 'active',
      amount_received: '0.00000000',
    });
    const row = await w.h.db
      .selectFrom('chain_transfers')
      .selectAll()
      .where('space_id', '=', s.spaceId)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('reversed');
    const accounts = await w.api('GET', '/integration/accounts', s.key.key);
    expect(accounts.body.items.find((item: { id: string }) => item.id === s.account.id).balance).toBe(
      '0.00000000',
    );
    const settlement = await w.h.db
      .selectFrom('settlements')
      .selectAll()
      .where('payment_request_id', '=', request.id)
      .executeTakeFirstOrThrow();
    expect(settlement.reversed_at).not.toBeNull();
  });

  it('leaves an invoice it had paid paid, and records the shortfall', async () => {
    const s = await w.seller();
    const created = await w.api('POST', '/integration/invoices', s.key.key, {
      account_id: s.account.id,
      client_name: 'Acme',
      due_on: '2027-12-31',
      line_items: [{ description: 'Report', unit_price: '3' }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const invoiceId = created.body.id as string;
    await w.api('POST', `/integration/invoices/${invoiceId}/send`, s.key.key, { via: 'none' });
    const token = String(created.body.url).split('/i/')[1];
    const opened = await fetch(`${w.base}/i/${token}/pay`, { method: 'POST', redirect: 'manual' });
    expect(opened.status).toBe(303);
    const payer = await payerWith(10_000_000n);
    const snapshot = await markChain();
    await transfer(payer, s.address, 3_000_000n);
    await watchOnce(deps);
    expect((await w.api('GET', `/integration/invoices/${invoiceId}`, s.key.key)).body).toMatchObject({
      status: 'paid',
    });
    await reorganiseBackTo(snapshot);
    await watchTwoRoundsApart();
    expect((await w.api('GET', `/integration/invoices/${invoiceId}`, s.key.key)).body).toMatchObject({
      status: 'paid',
      paid_amount: '3.00000000',
    });
    const row = await w.h.db
      .selectFrom('invoices')
      .select('shortfall_amount')
      .where('id', '=', invoiceId)
      .executeTakeFirstOrThrow();
    expect(Number(row.shortfall_amount)).toBe(3);
  });
});
