import type { BookChannelEvent, BookEventFields, KeyChannelEvent, KeyEventData } from '../../core/events.ts';
import { type AmountE8, formatAmount, formatAmountTrimmed } from '../../core/money.ts';

// One constructor per event (spec §6), so each payload is spelled once, with the spec's fields
// and its amounts formatted by the channel's rule: eight places on the book channel, trailing
// zeros trimmed on the key channel. Producers pass amounts as AmountE8, never as text.

/** A book-channel event as the outbox takes it. */
export type BookOutboxEvent<E extends BookChannelEvent = BookChannelEvent> = {
  [Name in E]: { channel: 'book'; spaceId: string; event: Name; fields: BookEventFields[Name]; at: Date };
}[E];

/** A key-channel event as the outbox takes it. */
export type KeyOutboxEvent<E extends KeyChannelEvent = KeyChannelEvent> = {
  [Name in E]: {
    channel: 'key';
    spaceId: string;
    keyId: string;
    event: Name;
    data: KeyEventData[Name];
    at: Date;
  };
}[E];

/** Where and when an event happens: its space and moment (and, on the key channel, the key). */
export type EventScope = { spaceId: string; at: Date };
export type KeyEventScope = EventScope & { keyId: string };

/** The fields with the named amounts given as AmountE8 instead of their wire text. */
type Amounted<Fields, Amounts extends keyof Fields> = Omit<Fields, Amounts> & Record<Amounts, AmountE8>;

function book<E extends BookChannelEvent>(event: E, scope: EventScope, fields: BookEventFields[E]) {
  return { channel: 'book', spaceId: scope.spaceId, event, fields, at: scope.at } as BookOutboxEvent<E>;
}

function key<E extends KeyChannelEvent>(event: E, scope: KeyEventScope, data: KeyEventData[E]) {
  const { spaceId, keyId, at } = scope;
  return { channel: 'key', spaceId, keyId, event, data, at } as KeyOutboxEvent<E>;
}

/** What money.in and money.out both carry: one entry's move on one account. */
export type MoneyMove = Amounted<Omit<BookEventFields['money.in'], 'direction'>, 'amount'>;

export function moneyIn(scope: EventScope, move: MoneyMove): BookOutboxEvent<'money.in'> {
  return book('money.in', scope, { ...move, direction: 'in', amount: formatAmount(move.amount) });
}

export function moneyOut(scope: EventScope, move: MoneyMove): BookOutboxEvent<'money.out'> {
  return book('money.out', scope, { ...move, direction: 'out', amount: formatAmount(move.amount) });
}

export function invoicePaidOnBook(
  scope: EventScope,
  paid: Amounted<BookEventFields['invoice.paid'], 'amount'>,
): BookOutboxEvent<'invoice.paid'> {
  return book('invoice.paid', scope, { ...paid, amount: formatAmount(paid.amount) });
}

export function payoutExecuted(
  scope: EventScope,
  payout: Amounted<BookEventFields['payout.executed'], 'amount'>,
): BookOutboxEvent<'payout.executed'> {
  return book('payout.executed', scope, { ...payout, amount: formatAmount(payout.amount) });
}

export function paymentAwaitingApproval(
  scope: EventScope,
  payment: Amounted<BookEventFields['payment.awaiting_approval'], 'amount'>,
): BookOutboxEvent<'payment.awaiting_approval'> {
  return book('payment.awaiting_approval', scope, { ...payment, amount: formatAmount(payment.amount) });
}

export function paymentBlocked(
  scope: EventScope,
  payment: Amounted<BookEventFields['payment.blocked'], 'amount'>,
): BookOutboxEvent<'payment.blocked'> {
  return book('payment.blocked', scope, { ...payment, amount: formatAmount(payment.amount) });
}

export function paymentRequestPaid(
  scope: KeyEventScope,
  paid: Amounted<KeyEventData['payment_request.paid'], 'amount'>,
): KeyOutboxEvent<'payment_request.paid'> {
  return key('payment_request.paid', scope, { ...paid, amount: formatAmountTrimmed(paid.amount) });
}

export function invoicePaidOnKey(
  scope: KeyEventScope,
  paid: Amounted<KeyEventData['invoice.paid'], 'total' | 'total_paid'>,
): KeyOutboxEvent<'invoice.paid'> {
  const amounts = {
    total: formatAmountTrimmed(paid.total),
    total_paid: formatAmountTrimmed(paid.total_paid),
  };
  return key('invoice.paid', scope, { ...paid, ...amounts });
}

export function invoiceClaimedPaid(
  scope: KeyEventScope,
  claim: Amounted<KeyEventData['invoice.claimed_paid'], 'total'>,
): KeyOutboxEvent<'invoice.claimed_paid'> {
  return key('invoice.claimed_paid', scope, { ...claim, total: formatAmountTrimmed(claim.total) });
}

export function invoiceDeferralRequested(
  scope: KeyEventScope,
  request: Amounted<KeyEventData['invoice.deferral_requested'], 'total'>,
): KeyOutboxEvent<'invoice.deferral_requested'> {
  return key('invoice.deferral_requested', scope, { ...request, total: formatAmountTrimmed(request.total) });
}

export function clientQuestion(
  scope: KeyEventScope,
  question: KeyEventData['client.question'],
): KeyOutboxEvent<'client.question'> {
  return key('client.question', scope, question);
}

export function clientFile(
  scope: KeyEventScope,
  file: KeyEventData['client.file'],
): KeyOutboxEvent<'client.file'> {
  return key('client.file', scope, file);
}
