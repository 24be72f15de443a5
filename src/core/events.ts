// The events the service tells the world (spec §6), by name and with the fields each carries on
// the wire. The names are listed once here; the outbox, the webhook subscriptions and the app's
// event picker all read them from this file.

/** Book channel (spec §6.2): to the space's subscriptions. */
export const BOOK_CHANNEL_EVENTS = [
  'money.in',
  'money.out',
  'invoice.paid',
  'payout.executed',
  'payment.awaiting_approval',
  'payment.blocked',
] as const;
export type BookChannelEvent = (typeof BOOK_CHANNEL_EVENTS)[number];

/** Key channel (spec §6.1): to the webhook address of the key that owns the object. */
export const KEY_CHANNEL_EVENTS = [
  'payment_request.paid',
  'invoice.paid',
  'invoice.claimed_paid',
  'invoice.deferral_requested',
  'client.question',
  'client.file',
] as const;
export type KeyChannelEvent = (typeof KEY_CHANNEL_EVENTS)[number];

/** A ledger entry's kind and origin as the book channel spells them (spec §6.2). */
export type EntryKind = 'income' | 'expense' | 'transfer';
export type Origin = 'rail' | 'manual' | 'import' | 'internal';

/** money.in and money.out: amounts unsigned with eight places, the direction a separate word. */
type MoneyFields<Direction extends 'in' | 'out'> = {
  transaction_id: string;
  account_id: string;
  direction: Direction;
  amount: string;
  currency: string;
  kind: EntryKind;
  origin: Origin;
  occurred_on: string;
};

type PaymentFields = { payment_id: string; amount: string; currency: string };

/** Each book-channel event's fields beyond event, version and at (spec §6.2). */
export type BookEventFields = {
  'money.in': MoneyFields<'in'>;
  'money.out': MoneyFields<'out'>;
  'invoice.paid': { invoice_id: string; number: string; amount: string; currency: string };
  'payout.executed': PaymentFields & { rail: string; transaction_id: string };
  'payment.awaiting_approval': PaymentFields & { required_approvals: number };
  'payment.blocked': PaymentFields & { reason: string };
};

/** Each key-channel event's data (spec §6.1): amounts trimmed of trailing zeros. */
export type KeyEventData = {
  'payment_request.paid': {
    payment_request_id: string;
    token: string;
    resource_id: string | null;
    amount: string;
    asset: string;
    network: string;
    tx_hash: string;
    payer: string | null;
    settled_at: string;
    memo: string | null;
  };
  'invoice.paid': {
    invoice_id: string;
    number: string;
    currency: string;
    total: string;
    total_paid: string;
    via: 'manual' | 'settlement' | 'card' | 'write_off';
  };
  'invoice.claimed_paid': {
    invoice_id: string;
    contact_id: string;
    client: string;
    number: string;
    total: string;
    currency: string;
  };
  'invoice.deferral_requested': {
    invoice_id: string;
    contact_id: string;
    days: number;
    due: string;
    client: string;
    number: string;
    total: string;
    currency: string;
  };
  'client.question': { contact_id: string; client: string; text: string };
  'client.file': { contact_id: string; client: string; name: string };
};
