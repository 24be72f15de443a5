import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { hasSecretShape } from '../../core/ids.ts';
import { type AmountE8, formatAmount } from '../../core/money.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import { readAmount } from '../ledger/index.ts';
import {
  findRequestByToken,
  openPrice,
  presentRequest,
  refundSettlement,
  settlePaymentRequest,
} from '../payment-requests/index.ts';
import { amountFromMinor, cardAmount, meaningOf, minorOf } from './domain.ts';
import { type CardGateway, idOf } from './gateway.ts';
import * as store from './store.ts';

export type CardPaymentsDeps = {
  db: Db;
  clock: Clock;
  publicUrl: string;
  gateway: CardGateway;
  logger?: Pick<Logger, 'warn' | 'info'> | undefined;
};

/** Whether the card rail can take this amount (pages show the button only then). */
export function cardTakes(currency: string, amount: AmountE8): boolean {
  return cardAmount(currency, amount).ok;
}

/**
 * Opens a Stripe Checkout Session for what is still open on a payment request and answers the
 * page to send the payer to. Asking again for the same open amount answers the same session
 * (Stripe's idempotency key), so a double click opens one session, not two.
 */
export async function openCheckout(deps: CardPaymentsDeps, token: string): Promise<{ url: string }> {
  const request = hasSecretShape(token, 'pr_') ? await findRequestByToken(deps.db, token) : undefined;
  if (!request) throw new AppError('not_found', 'No payment request at this address.');
  const now = deps.clock.now();
  const status = presentRequest(request, deps.publicUrl, now).status;
  const open = openPrice(request);
  if (status !== 'active' || open <= 0n)
    throw new AppError(
      'request_not_payable',
      `This payment request is ${status}; it takes no more payments.`,
      {
        status,
      },
    );
  const amount = cardAmount(request.currency, open);
  if (!amount.ok)
    throw new AppError('amount_not_accepted', amount.detail, { field: 'amount', reason: amount.reason });
  // Ids only: the page token is a bearer secret and stays out of Stripe's dashboard.
  const metadata = {
    tollbook_space_id: request.space_id,
    tollbook_payment_request_id: request.id,
    tollbook_amount: formatAmount(open),
  };
  const page = `${deps.publicUrl}/pay/${token}`;
  let session: { id: string; url: string };
  try {
    session = await deps.gateway.openSession({
      currency: amount.currency,
      amountMinor: amount.minor,
      name: request.memo || 'Payment',
      successUrl: `${page}?card=returned`,
      cancelUrl: page,
      requestId: request.id,
      metadata,
      idempotencyKey: `tollbook-checkout-${request.id}-${amount.minor}`,
    });
  } catch (error) {
    deps.logger?.warn({ err: error, requestId: request.id }, 'Stripe did not open a Checkout Session');
    throw new AppError(
      'card_provider_unavailable',
      'The card processor could not be reached; try again shortly.',
    );
  }
  await store.insertCheckout(deps.db, {
    id: randomUUID(),
    space_id: request.space_id,
    payment_request_id: request.id,
    session_id: session.id,
    currency: request.currency,
    amount: formatAmount(open),
    amount_minor: amount.minor.toString(),
    created_at: now,
  });
  return { url: session.url };
}

export type WebhookOutcome = { received: true; duplicate: boolean; outcome: string };

/**
 * A Stripe webhook: checked against the endpoint secret over the exact bytes received, then acted
 * on once per event id (the claim and its effects commit together, so a failure leaves the event
 * for Stripe's retry and a replay finds it claimed).
 */
export async function receiveStripeEvent(
  deps: CardPaymentsDeps,
  rawBody: Buffer,
  signature: string | undefined,
): Promise<WebhookOutcome> {
  let event: ReturnType<CardGateway['verify']>;
  try {
    if (signature === undefined || signature === '') throw new Error('no signature');
    event = deps.gateway.verify(rawBody, signature);
  } catch {
    throw new AppError('invalid_signature', 'The Stripe-Signature header does not match this body.');
  }
  const object = event.data.object as unknown as Record<string, unknown>;
  const meaning = meaningOf(event.type, object.payment_status);
  // A refund event names its charge; the charge's refunded total is read before the transaction.
  const refund = meaning === 'refund' ? await refundFacts(deps, event.type, object) : undefined;
  const at = deps.clock.now();
  return deps.db.transaction().execute(async (tx) => {
    if (!(await store.claimEvent(tx, { id: event.id, type: event.type, at })))
      return { received: true as const, duplicate: true, outcome: 'duplicate' };
    let outcome = 'ignored';
    if (meaning === 'session_paid') outcome = await settleSession(tx, object, at);
    else if (meaning === 'session_pending') outcome = 'awaiting_payment';
    else if (refund) outcome = await applyRefund(tx, refund, at);
    await store.recordOutcome(tx, event.id, outcome);
    if (outcome.startsWith('unknown') || outcome.startsWith('mismatch'))
      deps.logger?.warn({ eventId: event.id, type: event.type, outcome }, 'Stripe event not applied');
    return { received: true as const, duplicate: false, outcome };
  });
}

/** A paid session settles its request through the one settlement function, once per PaymentIntent. */
async function settleSession(tx: Queryable, session: Record<string, unknown>, at: Date): Promise<string> {
  const checkout =
    typeof session.id === 'string' ? await store.lockCheckoutBySession(tx, session.id) : undefined;
  if (!checkout) return 'unknown_session';
  if (checkout.status === 'paid') return 'already_settled';
  const paymentIntentId = idOf(session.payment_intent);
  const minor = minorOf(session.amount_total);
  const currency = typeof session.currency === 'string' ? session.currency : '';
  const amount = minor === undefined ? undefined : amountFromMinor(currency, minor);
  if (
    !paymentIntentId ||
    amount === undefined ||
    amount <= 0n ||
    currency.toUpperCase() !== checkout.currency
  )
    return 'mismatch_session';
  const details = session.customer_details as { email?: unknown } | null | undefined;
  const outcome = await settlePaymentRequest(tx, {
    spaceId: checkout.space_id,
    requestId: checkout.payment_request_id,
    amount,
    rail: 'card',
    reference: paymentIntentId,
    payer: typeof details?.email === 'string' ? details.email.slice(0, 200) : 'card (Stripe)',
    at,
    // The card was charged: the money is booked even if the request lapsed or was paid by
    // another rail meanwhile (it ends overpaid, for the seller to refund), never dropped.
    committed: true,
  });
  if (!outcome.ok) return `not_settled_${outcome.status}`;
  await store.markCheckoutPaid(tx, checkout.id, {
    paymentIntentId,
    settlementId: outcome.settlement.id,
    amount: formatAmount(amount),
    at,
  });
  return outcome.replayed ? 'already_settled' : 'settled';
}

type RefundFacts = { paymentIntentId: string | null; amountRefunded: unknown; currency: string };

async function refundFacts(
  deps: CardPaymentsDeps,
  type: string,
  object: Record<string, unknown>,
): Promise<RefundFacts> {
  if (type === 'charge.refunded') {
    return {
      paymentIntentId: idOf(object.payment_intent),
      amountRefunded: object.amount_refunded,
      currency: typeof object.currency === 'string' ? object.currency : '',
    };
  }
  // refund.* events carry one refund; the charge holds the total refunded, which is what counts.
  const chargeId = idOf(object.charge);
  if (!chargeId) return { paymentIntentId: null, amountRefunded: undefined, currency: '' };
  try {
    return await deps.gateway.charge(chargeId);
  } catch (error) {
    // Answered 502, so Stripe delivers the event again later; nothing was claimed.
    deps.logger?.warn({ err: error, chargeId }, 'Stripe did not answer for a refunded charge');
    throw new AppError(
      'card_provider_unavailable',
      'The card processor could not be reached; try again shortly.',
    );
  }
}

/**
 * Brings the books up to the total Stripe says it has refunded on a PaymentIntent: only the part
 * not booked yet is reversed, so events for one refund, arriving in any order or twice, book it once.
 */
async function applyRefund(tx: Queryable, refund: RefundFacts, at: Date): Promise<string> {
  const checkout = refund.paymentIntentId
    ? await store.lockCheckoutByPaymentIntent(tx, refund.paymentIntentId)
    : undefined;
  if (checkout?.status !== 'paid') return 'unknown_payment';
  const minor = minorOf(refund.amountRefunded);
  const total = minor === undefined ? undefined : amountFromMinor(refund.currency, minor);
  if (total === undefined || refund.currency.toUpperCase() !== checkout.currency) return 'mismatch_refund';
  const paid = readAmount(checkout.paid_amount);
  const booked = readAmount(checkout.refunded_amount);
  // Stripe never refunds more than was charged; the books never take back more than they got.
  let capped = total;
  if (capped > paid) capped = paid;
  if (capped <= booked) return 'refund_already_booked';
  const delta = (capped - booked) as AmountE8;
  await refundSettlement(tx, {
    spaceId: checkout.space_id,
    rail: 'card',
    reference: defined(checkout.payment_intent_id, "a refunded checkout's payment intent"),
    amount: delta,
    at,
    memo: 'Card payment refunded through Stripe',
  });
  await store.setRefunded(tx, checkout.id, formatAmount(capped as AmountE8));
  return 'refunded';
}
