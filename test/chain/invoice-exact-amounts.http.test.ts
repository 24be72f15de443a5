import type { Address } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAmount } from '../../src/core/money.ts';
import { type WatchDeps, watchOnce } from '../../src/features/chain-watch/index.ts';
import { checkLedger, readAmount } from '../../src/features/ledger/index.ts';
import { fundedPayer, sendTokenTransfer, startWatchedWorld, type X402World } from './x402-setup.ts';

// Issue 22, item 1, the invoice's side: the invoice page's Pay button mints a request that may ask
// for the invoice's open amount lowered by a tag (under one cent). A payer who sends exactly what
// they were asked must see the invoice paid, with invoice.paid once and the books clean: the tag
// is given as a settlement discount. Partial and over-payments behave as before.

let w: X402World;
let deps: WatchDeps;
let close: (() => Promise<void>) | undefined;
beforeAll(async () => {
  ({ w, deps, close } = await startWatchedWorld());
}, 600_000);
afterAll(() => close?.());

type Seller = Awaited<ReturnType<X402World['seller']>>;
type Payment = { via: string; amount: string };

const transfer = (payer: PrivateKeyAccount, to: Address, baseUnits: bigint) =>
  sendTokenTransfer(w, payer, to, baseUnits);

/** USDC base units (10^-6) of an eight-decimal amount. */
const baseUnitsOf = (amount: string) => (readAmount(amount) as bigint) / 100n;

/** A sent invoice of `price` USD (no tax) on the seller's USDC account. */
async function sentInvoice(s: Seller, price: string) {
  const created = await w.api('POST', '/integration/invoices', s.key.key, {
    account_id: s.account.id,
    currency: 'USD',
    client_name: 'Acme',
    due_on: '2027-12-31',
    line_items: [{ description: 'Consulting', unit_price: price, quantity: '1' }],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const invoice = created.body as { id: string; url: string; total: string };
  const sent = await w.api('POST', `/integration/invoices/${invoice.id}/send`, s.key.key, { via: 'none' });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  return { ...invoice, token: invoice.url.split('/i/')[1]! };
}

/** The invoice page's Pay button: the payment request it opens. */
async function payButton(s: Seller, invoiceToken: string) {
  const res = await fetch(`${w.base}/i/${invoiceToken}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
    redirect: 'manual',
  });
  expect(res.status).toBe(303);
  const token = String(res.headers.get('location')).split('/pay/')[1]!;
  const request = await w.api('GET', `/integration/payment-requests/${token}`, s.key.key);
  return request.body as { id: string; token: string; amount: string; amount_due: string; status: string };
}

const invoiceOf = async (s: Seller, id: string) =>
  (await w.api('GET', `/integration/invoices/${id}`, s.key.key)).body as {
    status: string;
    paid_amount: string;
    payments: Payment[];
  };

const paidEvents = (spaceId: string) =>
  w.h.db
    .selectFrom('outbox_events')
    .select(['channel', 'payload'])
    .where('space_id', '=', spaceId)
    .where('event', '=', 'invoice.paid')
    .execute();

/** The balance of the space's settlement-discount expense (what was given away), in 10^-8. */
async function discountGiven(spaceId: string): Promise<bigint> {
  const rows = await w.h.db
    .selectFrom('ledger_postings')
    .innerJoin('ledger_accounts', 'ledger_accounts.id', 'ledger_postings.ledger_account_id')
    .select('ledger_postings.amount')
    .where('ledger_accounts.space_id', '=', spaceId)
    .where('ledger_accounts.kind', '=', 'expense')
    .where('ledger_accounts.ref', '=', 'settlement_discount')
    .execute();
  return rows.reduce((sum, row) => sum + (readAmount(row.amount) as bigint), 0n);
}

/** What the seller's USDC account holds in the books. */
const balanceOf = async (s: Seller) => {
  const row = await w.h.db
    .selectFrom('ledger_accounts')
    .select('balance')
    .where('space_id', '=', s.spaceId)
    .where('kind', '=', 'asset')
    .where('ref', '=', s.account.id)
    .executeTakeFirstOrThrow();
  return formatAmount(readAmount(row.balance));
};

/**
 * A seller whose invoice's request carries a tag: another open request asks for the invoice's
 * price first. `freeBlocker` pays that one off exactly, so the invoice's request is then the only
 * open one on the address (partial payments fall back oldest first and would reach it first).
 */
async function taggedInvoice(price: string, freeBlocker: boolean) {
  const s = await w.seller({ scopes: ['invoices', 'payments'] });
  const blocker = await w.mint(s.key.key, price, { account_id: s.account.id });
  expect(blocker.amount_due).toBe(blocker.amount);
  const invoice = await sentInvoice(s, price);
  const request = await payButton(s, invoice.token);
  expect(request.amount).toBe(invoice.total);
  expect(readAmount(request.amount) - readAmount(request.amount_due)).toBe(100n); // 10^-6 USDC
  const payer = await fundedPayer(w, 50_000_000n);
  if (freeBlocker) {
    await transfer(payer, s.address, baseUnitsOf(blocker.amount_due));
    await watchOnce(deps);
    expect(
      (await w.api('GET', `/integration/payment-requests/${blocker.token}`, s.key.key)).body.status,
    ).toBe('paid');
  }
  return { s, invoice, request, payer, blocker };
}

describe('an invoice paid on its page by a direct transfer', () => {
  it('ends paid when the payer sends exactly the tagged amount asked; the tag is a discount; invoice.paid once', async () => {
    const { s, invoice, request, payer, blocker } = await taggedInvoice('3', false);
    await transfer(payer, s.address, baseUnitsOf(request.amount_due));
    await watchOnce(deps);
    expect(
      (await w.api('GET', `/integration/payment-requests/${request.token}`, s.key.key)).body,
    ).toMatchObject({
      status: 'paid',
      amount_received: request.amount_due,
    });
    // The exact transfer found the invoice's request, not the older one at the full price.
    expect(
      (await w.api('GET', `/integration/payment-requests/${blocker.token}`, s.key.key)).body.status,
    ).toBe('active');
    const after = await invoiceOf(s, invoice.id);
    expect(after).toMatchObject({ status: 'paid', paid_amount: '3.00000000' });
    expect(after.payments.map((payment) => [payment.via, payment.amount])).toEqual([
      ['settlement', '2.99999900'],
      ['write_off', '0.00000100'],
    ]);
    const events = await paidEvents(s.spaceId);
    expect(events.map((event) => event.channel).sort()).toEqual(['book', 'key']);
    // The key channel names the road the money came by, not the discount.
    expect(JSON.stringify(events.find((event) => event.channel === 'key')!.payload)).toContain(
      '"via":"settlement"',
    );
    // No money is invented: the account holds what arrived; the tag is an expense.
    expect(await balanceOf(s)).toBe('2.99999900');
    expect(await discountGiven(s.spaceId)).toBe(100n);
    expect((await checkLedger(w.h.db, s.spaceId)).sound).toBe(true);
    // Watching again changes nothing.
    await watchOnce(deps);
    expect((await paidEvents(s.spaceId)).length).toBe(2);
    expect((await invoiceOf(s, invoice.id)).payments).toHaveLength(2);
  });

  it('a partial payment leaves the invoice partial; the exact rest closes it with the discount, once', async () => {
    const { s, invoice, request, payer } = await taggedInvoice('4', true);
    await transfer(payer, s.address, 1_000_000n);
    await watchOnce(deps);
    expect(await invoiceOf(s, invoice.id)).toMatchObject({ status: 'partial', paid_amount: '1.00000000' });
    expect(await discountGiven(s.spaceId)).toBe(0n);
    expect(await paidEvents(s.spaceId)).toHaveLength(0);
    // The rest of what the request asks: 2.999999.
    await transfer(payer, s.address, baseUnitsOf(request.amount_due) - 1_000_000n);
    await watchOnce(deps);
    const after = await invoiceOf(s, invoice.id);
    expect(after).toMatchObject({ status: 'paid', paid_amount: '4.00000000' });
    expect(after.payments.map((payment) => [payment.via, payment.amount])).toEqual([
      ['settlement', '1.00000000'],
      ['settlement', '2.99999900'],
      ['write_off', '0.00000100'],
    ]);
    expect((await paidEvents(s.spaceId)).map((event) => event.channel).sort()).toEqual(['book', 'key']);
    expect(await discountGiven(s.spaceId)).toBe(100n);
    expect((await checkLedger(w.h.db, s.spaceId)).sound).toBe(true);
  });

  it('an over-payment closes the invoice; what the request did not take stays income, nothing is lost', async () => {
    const { s, invoice, request, payer } = await taggedInvoice('5', true);
    // The whole price and one more dollar: the request takes what it asked, the rest is income.
    await transfer(payer, s.address, 6_000_000n);
    await watchOnce(deps);
    expect(
      (await w.api('GET', `/integration/payment-requests/${request.token}`, s.key.key)).body,
    ).toMatchObject({
      status: 'paid',
      amount_received: request.amount_due,
    });
    expect(await invoiceOf(s, invoice.id)).toMatchObject({ status: 'paid', paid_amount: '5.00000000' });
    expect(await paidEvents(s.spaceId)).toHaveLength(2);
    // The blocker's 5 and these 6 are all on the account.
    expect(await balanceOf(s)).toBe('11.00000000');
    expect((await checkLedger(w.h.db, s.spaceId)).sound).toBe(true);
  });

  it('an invoice whose request needed no tag is paid by its exact amount with no discount, as before', async () => {
    const s = await w.seller({ scopes: ['invoices', 'payments'] });
    const invoice = await sentInvoice(s, '2');
    const request = await payButton(s, invoice.token);
    expect(request.amount_due).toBe(request.amount);
    const payer = await fundedPayer(w, 5_000_000n);
    await transfer(payer, s.address, 2_000_000n);
    await watchOnce(deps);
    const after = await invoiceOf(s, invoice.id);
    expect(after).toMatchObject({ status: 'paid', paid_amount: '2.00000000' });
    expect(after.payments.map((payment) => payment.via)).toEqual(['settlement']);
    expect(await discountGiven(s.spaceId)).toBe(0n);
    expect(await paidEvents(s.spaceId)).toHaveLength(2);
    expect((await checkLedger(w.h.db, s.spaceId)).sound).toBe(true);
  });

  it('a bank payment marked by hand follows the same rule: the amount asked closes it, the price closes it with no discount', async () => {
    for (const [sent, discount] of [
      ['2.99999900', 100n],
      ['3', 0n],
    ] as const) {
      const { s, invoice, request } = await taggedInvoice('3', false);
      const marked = await w.h.inject({
        method: 'POST',
        url: `/app/api/spaces/${s.spaceId}/payment-requests/${request.token}/mark-paid`,
        session: s.owner.token,
        payload: { amount: sent, reference: `bank-${sent}` },
      });
      expect(marked.statusCode, marked.body).toBe(200);
      expect(marked.json()).toMatchObject({ status: 'paid' });
      expect(await invoiceOf(s, invoice.id)).toMatchObject({ status: 'paid', paid_amount: '3.00000000' });
      expect(await discountGiven(s.spaceId)).toBe(discount);
      expect(await paidEvents(s.spaceId)).toHaveLength(2);
      expect((await checkLedger(w.h.db, s.spaceId)).sound).toBe(true);
    }
  });

  it('two concurrent payments of the amount asked: one closes the invoice, one discount, invoice.paid once', async () => {
    const { s, invoice, request } = await taggedInvoice('3', false);
    const answers = await Promise.all(
      ['a', 'b', 'c'].map((reference) =>
        w.h.inject({
          method: 'POST',
          url: `/app/api/spaces/${s.spaceId}/payment-requests/${request.token}/mark-paid`,
          session: s.owner.token,
          payload: { amount: request.amount_due, reference },
        }),
      ),
    );
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 409, 409]);
    const after = await invoiceOf(s, invoice.id);
    expect(after).toMatchObject({ status: 'paid', paid_amount: '3.00000000' });
    expect(after.payments.map((payment) => payment.via)).toEqual(['settlement', 'write_off']);
    expect(await discountGiven(s.spaceId)).toBe(100n);
    expect(await paidEvents(s.spaceId)).toHaveLength(2);
    expect((await checkLedger(w.h.db, s.spaceId)).sound).toBe(true);
  });
});
