import QRCode from 'qrcode';
import type { Address } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAmount } from '../../src/core/money.ts';
import { type WatchDeps, watchOnce } from '../../src/features/chain-watch/index.ts';
import { checkLedger, readAmount } from '../../src/features/ledger/index.ts';
import { fundedPayer, sendTokenTransfer, startWatchedWorld, type X402World } from './x402-setup.ts';

// Issue 22 item 1: every open request on an address asks for an amount of its own, so a direct
// transfer of exactly that amount lands on that request, whatever the order; what matches no
// request (partial and over-payments) falls back to oldest first; each settlement records the
// rule that matched it; a reorganisation undoes exactly the transfer it removed.

let w: X402World;
let deps: WatchDeps;
let close: (() => Promise<void>) | undefined;
beforeAll(async () => {
  ({ w, deps, close } = await startWatchedWorld());
}, 600_000);
afterAll(() => close?.());

type Minted = { id: string; token: string; amount: string; amount_due: string };

const transfer = (payer: PrivateKeyAccount, to: Address, baseUnits: bigint) =>
  sendTokenTransfer(w, payer, to, baseUnits);

const payerWith = (usdc: bigint) => fundedPayer(w, usdc);

/** USDC base units (10^-6) of an eight-decimal amount. */
const baseUnitsOf = (amount: string) => (readAmount(amount) as bigint) / 100n;

const record = async (key: string, token: string) =>
  (await w.api('GET', `/integration/payment-requests/${token}`, key)).body;

const settlementsOf = (requestId: string) =>
  w.h.db
    .selectFrom('settlements')
    .select(['amount', 'matched_by', 'reversed_at'])
    .where('payment_request_id', '=', requestId)
    .execute();

/** A deterministic shuffle (a seeded LCG), so a failure can be replayed. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed;
  for (let index = out.length - 1; index > 0; index--) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    const other = state % (index + 1);
    [out[index], out[other]] = [out[other]!, out[index]!];
  }
  return out;
}

describe('unique asked amounts', () => {
  it('gives concurrent requests at one price on one address amounts no other open request asks for', async () => {
    const s = await w.seller();
    const minted = await Promise.all(
      Array.from({ length: 12 }, () => w.mint(s.key.key, '5', { account_id: s.account.id })),
    );
    const dues = minted.map((request) => request.amount_due);
    expect(new Set(dues).size).toBe(12);
    for (const request of minted) {
      expect(request.amount).toBe('5.00000000');
      // Under one cent below the price, in whole steps of the token's 10^-6.
      const tag = (readAmount(request.amount) as bigint) - (readAmount(request.amount_due) as bigint);
      expect(tag >= 0n && tag < 1_000_000n && tag % 100n === 0n).toBe(true);
    }
    // The first free amount is the price itself; a paid request frees its amount again.
    expect(dues).toContain('5.00000000');
  });

  it('asks a direct transfer for that exact amount on the pay page and in its QR code; x402, which names the request, pays the price', async () => {
    const s = await w.seller();
    await w.mint(s.key.key, '2', { account_id: s.account.id });
    const second = await w.mint(s.key.key, '2', { account_id: s.account.id });
    expect(second.amount_due).toBe('1.99999900');
    const quote = await fetch(`${w.base}/pay/${second.token}`, { headers: { accept: 'application/json' } });
    expect(quote.status).toBe(402);
    const body = (await quote.json()) as { accepts: { amount: string; payTo: string }[] };
    // An x402 authorization is settled for this very request, so it needs no tag: the price.
    expect(body.accepts[0]).toMatchObject({ amount: '2000000' });
    const page = await (
      await fetch(`${w.base}/pay/${second.token}`, { headers: { accept: 'text/html' } })
    ).text();
    expect(page).toContain('Send exactly <strong>1.999999 USDC</strong>');
    expect(page).toContain('QR code of the transfer');
    // The QR code is an EIP-681 transfer of exactly that many base units of the token: the
    // modules the page draws are the ones the qrcode library computes for the expected link.
    const uri = `ethereum:${w.token.address}@${w.local.network.chainId}/transfer?address=${s.address}&uint256=1999999`;
    expect(page).toContain(`data-encodes="${uri.replace(/&/g, '&amp;')}"`);
    const expected = QRCode.create(uri, { errorCorrectionLevel: 'M' }).modules;
    expect(drawnModules(page)).toEqual({ size: expected.size, dark: Array.from(expected.data) });
  });
});

/** The modules a pay page's QR code draws (1 dark, 0 light), read back from its SVG path. */
function drawnModules(page: string): { size: number; dark: number[] } {
  const svg = /<div class="qr" id="pay-qr"[^>]*><svg[^>]* viewBox="0 0 (\d+) \d+"[^>]*>(.*?)<\/svg>/.exec(
    page,
  );
  if (!svg?.[1] || svg[2] === undefined) throw new Error('The page has no QR code.');
  const size = Number(svg[1]) - 2;
  const dark = new Array<number>(size * size).fill(0);
  for (const run of svg[2].matchAll(/M(\d+) (\d+)h(\d+)v1h-\d+z/g)) {
    const [x, y, length] = [Number(run[1]) - 1, Number(run[2]) - 1, Number(run[3])];
    for (let col = x; col < x + length; col++) dark[y * size + col] = 1;
  }
  return { size, dark };
}

describe('matching direct transfers', () => {
  it('lands each of 20 exact transfers, sent in random order, on its own request among 20 open ones', async () => {
    const s = await w.seller();
    const prices = [
      '2',
      '2',
      '2',
      '2',
      '2',
      '2',
      '2',
      '3',
      '3',
      '3',
      '3',
      '3',
      '2.5',
      '2.5',
      '2.5',
      '2.5',
      '7',
      '7',
      '1',
      '1',
    ];
    const minted: Minted[] = [];
    for (const price of prices) minted.push(await w.mint(s.key.key, price, { account_id: s.account.id }));
    expect(new Set(minted.map((request) => request.amount_due)).size).toBe(20);
    const payer = await payerWith(100_000_000n);
    for (const request of shuffled(minted, 2211))
      await transfer(payer, s.address, baseUnitsOf(request.amount_due));
    await watchOnce(deps);
    for (const request of minted) {
      expect(await record(s.key.key, request.token), request.amount_due).toMatchObject({
        status: 'paid',
        amount_received: request.amount_due,
      });
      const settlements = await settlementsOf(request.id);
      expect(settlements).toHaveLength(1);
      expect(settlements[0]!.matched_by).toBe('exact');
      expect(formatAmount(readAmount(settlements[0]!.amount))).toBe(request.amount_due);
    }
    // Nothing was left over as income with no request, and the books balance to the unit.
    const transfers = await w.h.db
      .selectFrom('chain_transfers')
      .select('remainder_entry_id')
      .where('space_id', '=', s.spaceId)
      .execute();
    expect(transfers).toHaveLength(20);
    expect(transfers.every((row) => row.remainder_entry_id === null)).toBe(true);
    expect((await checkLedger(w.h.db, s.spaceId)).sound).toBe(true);
  });

  it('fills a partial payment and an over-payment oldest first, recording the rule, and books the excess as income', async () => {
    const s = await w.seller();
    const first = await w.mint(s.key.key, '3', { account_id: s.account.id });
    const second = await w.mint(s.key.key, '3', { account_id: s.account.id });
    const third = await w.mint(s.key.key, '1', { account_id: s.account.id });
    const payer = await payerWith(20_000_000n);
    // 1.5 matches no request: the oldest takes it.
    await transfer(payer, s.address, 1_500_000n);
    await watchOnce(deps);
    expect(await record(s.key.key, first.token)).toMatchObject({
      status: 'active',
      amount_received: '1.50000000',
    });
    // The rest of the oldest, exactly: it is what that request still asks for.
    await transfer(payer, s.address, 1_500_000n);
    await watchOnce(deps);
    expect(await record(s.key.key, first.token)).toMatchObject({
      status: 'paid',
      amount_received: '3.00000000',
    });
    expect((await settlementsOf(first.id)).map((row) => row.matched_by).sort()).toEqual([
      'exact',
      'oldest_first',
    ]);
    // 5 matches nothing: the second takes its 2.999999, the third its 1, and 1.000001 is income.
    await transfer(payer, s.address, 5_000_000n);
    await watchOnce(deps);
    expect(await record(s.key.key, second.token)).toMatchObject({
      status: 'paid',
      amount_received: '2.99999900',
    });
    expect(await record(s.key.key, third.token)).toMatchObject({
      status: 'paid',
      amount_received: '1.00000000',
    });
    expect((await settlementsOf(second.id))[0]!.matched_by).toBe('oldest_first');
    expect((await settlementsOf(third.id))[0]!.matched_by).toBe('oldest_first');
    const accounts = await w.api('GET', '/integration/accounts', s.key.key);
    expect(accounts.body.items.find((item: { id: string }) => item.id === s.account.id).balance).toBe(
      '8.00000000',
    );
    expect((await checkLedger(w.h.db, s.spaceId)).sound).toBe(true);
  });

  it('undoes only the transfer a reorganisation removed; sent again, it lands on the same request', async () => {
    const s = await w.seller();
    const minted: Minted[] = [];
    for (let index = 0; index < 3; index++)
      minted.push(await w.mint(s.key.key, '4', { account_id: s.account.id }));
    const payer = await payerWith(20_000_000n);
    await transfer(payer, s.address, baseUnitsOf(minted[2]!.amount_due));
    await transfer(payer, s.address, baseUnitsOf(minted[0]!.amount_due));
    await watchOnce(deps);
    const snapshot = (await w.local.publicClient.request({ method: 'evm_snapshot' as never })) as string;
    await transfer(payer, s.address, baseUnitsOf(minted[1]!.amount_due));
    await watchOnce(deps);
    expect(await record(s.key.key, minted[1]!.token)).toMatchObject({ status: 'paid' });
    await w.local.publicClient.request({ method: 'evm_revert' as never, params: [snapshot] as never });
    await w.local.publicClient.request({ method: 'anvil_mine' as never, params: ['0x2'] as never });
    // The watch undoes on evidence seen twice, at heads at least one block apart.
    expect((await watchOnce(deps))[0]!.reversed).toBe(0);
    await w.local.publicClient.request({ method: 'anvil_mine' as never, params: ['0x1'] as never });
    const report = await watchOnce(deps);
    expect(report[0]!.reversed).toBe(1);
    expect(await record(s.key.key, minted[1]!.token)).toMatchObject({
      status: 'active',
      amount_received: '0.00000000',
    });
    for (const kept of [minted[0]!, minted[2]!])
      expect(await record(s.key.key, kept.token)).toMatchObject({
        status: 'paid',
        amount_received: kept.amount_due,
      });
    await transfer(payer, s.address, baseUnitsOf(minted[1]!.amount_due));
    await watchOnce(deps);
    expect(await record(s.key.key, minted[1]!.token)).toMatchObject({
      status: 'paid',
      amount_received: minted[1]!.amount_due,
    });
    const settlements = await settlementsOf(minted[1]!.id);
    expect(settlements.map((row) => [row.matched_by, row.reversed_at === null])).toEqual(
      expect.arrayContaining([
        ['exact', false],
        ['exact', true],
      ]),
    );
    expect((await checkLedger(w.h.db, s.spaceId)).sound).toBe(true);
  });
});
