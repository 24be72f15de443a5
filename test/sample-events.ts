import type { BookChannelEvent } from '../src/core/events.ts';
import { asAmount } from '../src/core/money.ts';
import {
  type BookOutboxEvent,
  type EventScope,
  invoicePaidOnBook,
  invoicePaidOnKey,
  type KeyEventScope,
  type MoneyMove,
  moneyIn,
  moneyOut,
  paymentAwaitingApproval,
  paymentBlocked,
  paymentRequestPaid,
  payoutExecuted,
} from '../src/platform/outbox/events.ts';

// Events with every field the spec names, for tests of delivery (what travels matters there,
// not where it came from). Built by the same constructors the features use.

/** A money move of 2.50 (override any field). */
export function sampleMove(extra: Partial<MoneyMove> = {}): MoneyMove {
  return {
    transaction_id: '0b7a3f7e-8a3c-4a49-9a51-9f1c2f0d7c11',
    account_id: '5e1c0d2a-4b7e-4f3a-9c21-8d6f0a1b2c33',
    amount: asAmount(250_000_000n),
    currency: 'USDC',
    kind: 'income',
    origin: 'rail',
    occurred_on: '2026-01-01',
    ...extra,
  };
}

/** The wire fields of `sampleMove(extra)` as a money.in or money.out body carries them. */
export function sampleMoveFields(direction: 'in' | 'out', extra: Partial<MoneyMove> = {}) {
  const scope = { spaceId: '00000000-0000-4000-8000-000000000000', at: new Date(0) };
  const move = sampleMove(extra);
  return (direction === 'in' ? moneyIn(scope, move) : moneyOut(scope, move)).fields;
}

export const sampleMoneyIn = (scope: EventScope, extra: Partial<MoneyMove> = {}) =>
  moneyIn(scope, sampleMove(extra));

export const sampleMoneyOut = (scope: EventScope, extra: Partial<MoneyMove> = {}) =>
  moneyOut(scope, sampleMove(extra));

/** payment_request.paid for 1.5 USDC on Base Sepolia (override memo or payer). */
export function samplePaymentRequestPaid(scope: KeyEventScope, extra: { memo?: string | null } = {}) {
  return paymentRequestPaid(scope, {
    payment_request_id: '7d1f7f8e-2f59-4a43-9d5c-0a9a5c6c1a11',
    token: 'pr_sample',
    resource_id: null,
    amount: asAmount(150_000_000n),
    asset: 'USDC',
    network: 'base-sepolia',
    tx_hash: `0x${'ab'.repeat(32)}`,
    payer: `0x${'12'.repeat(20)}`,
    settled_at: scope.at.toISOString(),
    memo: extra.memo ?? null,
  });
}

/** invoice.paid on the key channel: INV-1 for 10 USDC, paid in full by hand. */
export function sampleInvoicePaid(scope: KeyEventScope) {
  const ten = asAmount(1_000_000_000n);
  return invoicePaidOnKey(scope, {
    invoice_id: '3c2b1a09-8f7e-4d6c-9b5a-4a3b2c1d0e0f',
    number: 'INV-1',
    currency: 'USDC',
    total: ten,
    total_paid: ten,
    via: 'manual',
  });
}

/** Any book-channel event, with sample fields (a move of 2.50 for money.in and money.out). */
export function sampleBookEvent(scope: EventScope, event: BookChannelEvent): BookOutboxEvent {
  const payment = {
    payment_id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
    amount: asAmount(250_000_000n),
    currency: 'USDC',
  };
  switch (event) {
    case 'money.in':
      return sampleMoneyIn(scope);
    case 'money.out':
      return sampleMoneyOut(scope);
    case 'invoice.paid':
      return invoicePaidOnBook(scope, {
        invoice_id: '3c2b1a09-8f7e-4d6c-9b5a-4a3b2c1d0e0f',
        number: 'INV-1',
        amount: payment.amount,
        currency: 'USDC',
      });
    case 'payout.executed':
      return payoutExecuted(scope, { ...payment, rail: 'book', transaction_id: sampleMove().transaction_id });
    case 'payment.awaiting_approval':
      return paymentAwaitingApproval(scope, { ...payment, required_approvals: 2 });
    case 'payment.blocked':
      return paymentBlocked(scope, { ...payment, reason: 'policy_limit' });
  }
}
