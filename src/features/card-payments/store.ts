import type { Selectable } from 'kysely';
import type { Queryable } from '../../platform/db/database.ts';
import type { CardCheckoutsTable } from '../../platform/db/schema.ts';

// Queries for the card rail's own tables: the Checkout Sessions opened and the Stripe events
// acted on.

export type CheckoutRow = Selectable<CardCheckoutsTable>;

/** Records an opened session; the same session answered twice (Stripe's idempotency) is kept once. */
export async function insertCheckout(
  db: Queryable,
  row: Omit<
    CheckoutRow,
    'status' | 'payment_intent_id' | 'settlement_id' | 'paid_amount' | 'refunded_amount' | 'paid_at'
  >,
) {
  await db
    .insertInto('card_checkouts')
    .values({ ...row, payment_intent_id: null, settlement_id: null, paid_at: null })
    .onConflict((conflict) => conflict.column('session_id').doNothing())
    .execute();
}

export function lockCheckoutBySession(db: Queryable, sessionId: string): Promise<CheckoutRow | undefined> {
  return db
    .selectFrom('card_checkouts')
    .selectAll()
    .where('session_id', '=', sessionId)
    .forUpdate()
    .executeTakeFirst();
}

export function lockCheckoutByPaymentIntent(
  db: Queryable,
  paymentIntentId: string,
): Promise<CheckoutRow | undefined> {
  return db
    .selectFrom('card_checkouts')
    .selectAll()
    .where('payment_intent_id', '=', paymentIntentId)
    .forUpdate()
    .executeTakeFirst();
}

export async function markCheckoutPaid(
  db: Queryable,
  id: string,
  paid: { paymentIntentId: string; settlementId: string; amount: string; at: Date },
) {
  await db
    .updateTable('card_checkouts')
    .set({
      status: 'paid',
      payment_intent_id: paid.paymentIntentId,
      settlement_id: paid.settlementId,
      paid_amount: paid.amount,
      paid_at: paid.at,
    })
    .where('id', '=', id)
    .execute();
}

export async function setRefunded(db: Queryable, id: string, refundedAmount: string) {
  await db
    .updateTable('card_checkouts')
    .set({ refunded_amount: refundedAmount })
    .where('id', '=', id)
    .execute();
}

/** Claims an event id; false when it was claimed before (a retry or a replay). */
export async function claimEvent(
  db: Queryable,
  event: { id: string; type: string; at: Date },
): Promise<boolean> {
  const inserted = await db
    .insertInto('stripe_events')
    .values({ event_id: event.id, type: event.type, outcome: 'received', received_at: event.at })
    .onConflict((conflict) => conflict.column('event_id').doNothing())
    .returning('event_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function recordOutcome(db: Queryable, eventId: string, outcome: string) {
  await db.updateTable('stripe_events').set({ outcome }).where('event_id', '=', eventId).execute();
}
