import { defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { utcDateOf } from '../../core/day.ts';
import { AppError } from '../../core/errors.ts';
import { formatAmount } from '../../core/money.ts';
import { WRITER_ROLES } from '../../core/roles.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { invoiceClaimedPaid, invoiceDeferralRequested } from '../../platform/outbox/events.ts';
import { enqueueEvent } from '../../platform/outbox/outbox.ts';
import { readAmount } from '../ledger/index.ts';
import { requireRole } from '../spaces/index.ts';
import { allows, openAmountOf } from './domain.ts';
import { type InvoicesDeps, present, recordPayment } from './service.ts';
import * as store from './store.ts';

// Invoices in a client's chat (features/chat posts them and hears the buttons): the delivery
// port the chat feature implements, and the invoice's side of "I paid" and "Need more time".
// Kept in one file so the chat's touch on invoices stays in one place.

/** A button press names an invoice: it must be this contact's, in this space, and still open. */
async function openInvoiceOfContact(tx: Queryable, spaceId: string, contactId: string, invoiceId: string) {
  const row = await store.lockInvoice(tx, spaceId, invoiceId);
  if (!row || row.contact_id !== contactId || row.kind !== 'invoice')
    return { ok: false as const, reason: 'unknown' };
  if (!allows('pay', row.status)) return { ok: false as const, reason: 'closed', row };
  return { ok: true as const, row };
}

/** What both chat answers' events say of the invoice; the contact is the one whose group answered. */
function eventBase(row: store.InvoiceRow, press: ChatPress) {
  return {
    invoice_id: row.id,
    contact_id: press.contactId,
    client: press.clientName,
    number: row.number,
    total: readAmount(row.total),
    currency: row.currency,
  };
}

export type ChatPress = {
  spaceId: string;
  contactId: string;
  clientName: string;
  invoiceId: string;
  keyId: string | null;
  at: Date;
};

/** "I paid": the invoice shows payer_marked_paid_at and invoice.claimed_paid fires; nothing is booked. */
export async function markPaidByPayer(tx: Queryable, press: ChatPress) {
  const found = await openInvoiceOfContact(tx, press.spaceId, press.contactId, press.invoiceId);
  if (!found.ok) return found;
  if (found.row.payer_marked_paid_at !== null) return { ok: true as const, row: found.row, repeated: true };
  const row = await store.updateInvoice(tx, press.spaceId, press.invoiceId, {
    payer_marked_paid_at: press.at,
  });
  const keyId = row.key_id ?? press.keyId;
  if (keyId !== null)
    await enqueueEvent(
      tx,
      invoiceClaimedPaid({ spaceId: row.space_id, keyId, at: press.at }, eventBase(row, press)),
    );
  return { ok: true as const, row, repeated: false };
}

/** "Need more time": promised_on is the proposed due date and invoice.deferral_requested fires. */
export async function requestDeferral(
  tx: Queryable,
  press: ChatPress & { days: number; propose: (dueOn: string) => string },
) {
  const found = await openInvoiceOfContact(tx, press.spaceId, press.contactId, press.invoiceId);
  if (!found.ok) return found;
  const proposedOn = press.propose(found.row.due_on);
  const row = await store.updateInvoice(tx, press.spaceId, press.invoiceId, {
    promised_on: proposedOn,
    deferral_state: 'requested',
  });
  const keyId = row.key_id ?? press.keyId;
  if (keyId !== null)
    await enqueueEvent(
      tx,
      invoiceDeferralRequested(
        { spaceId: row.space_id, keyId, at: press.at },
        { ...eventBase(row, press), days: press.days, due: proposedOn },
      ),
    );
  return { ok: true as const, row, repeated: false };
}

export type ChatAnswerDecision = 'confirm' | 'reject' | 'accept' | 'decline';

/**
 * The seller's decision in the app on what the client said in chat. Confirm and reject settle
 * "I paid" (confirm is followed by recording the open amount as a payment, by the caller);
 * accept and decline settle "Need more time" (accept moves the due date).
 */
export async function decideChatAnswer(
  tx: Queryable,
  clock: Clock,
  userId: string,
  spaceId: string,
  invoiceId: string,
  decision: ChatAnswerDecision,
) {
  await requireRole(tx, spaceId, userId, WRITER_ROLES);
  const row = await store.lockInvoice(tx, spaceId, invoiceId);
  if (!row) throw new AppError('not_found', 'No invoice with this id in this space.');
  const now = clock.now();
  if (decision === 'confirm' || decision === 'reject') {
    if (row.payer_marked_paid_at === null || !allows('pay', row.status))
      throw new AppError('invoice_state', 'The client has not marked this open invoice paid.', { decision });
    if (decision === 'reject')
      return store.updateInvoice(tx, spaceId, invoiceId, { payer_marked_paid_at: null, updated_at: now });
    return row;
  }
  if (row.deferral_state !== 'requested' || row.promised_on === null)
    throw new AppError('invoice_state', 'The client has no open request for more time on this invoice.', {
      decision,
    });
  if (decision === 'decline')
    return store.updateInvoice(tx, spaceId, invoiceId, {
      deferral_state: 'declined',
      promised_on: null,
      updated_at: now,
    });
  return store.updateInvoice(tx, spaceId, invoiceId, {
    deferral_state: 'accepted',
    due_on: row.promised_on,
    updated_at: now,
  });
}

/** Invoices of a contact waiting on the seller: marked paid by the client, or more time asked. */
export async function pendingChatAnswers(db: Queryable, spaceId: string, contactId: string) {
  const rows = await store.listChatPending(db, spaceId, contactId);
  return rows.map((row) => ({
    invoice_id: row.id,
    number: row.number,
    total: formatAmount(readAmount(row.total)),
    currency: row.currency,
    due_on: row.due_on,
    payer_marked_paid_at: row.payer_marked_paid_at?.toISOString() ?? null,
    promised_on: row.deferral_state === 'requested' ? row.promised_on : null,
  }));
}

/** The app's decision on a chat answer; confirming "I paid" records the open amount as a payment. */
export async function settleChatAnswer(
  tx: Queryable,
  deps: InvoicesDeps,
  userId: string,
  spaceId: string,
  invoiceId: string,
  decision: ChatAnswerDecision,
) {
  const row = await decideChatAnswer(tx, deps.clock, userId, spaceId, invoiceId, decision);
  if (decision === 'confirm') {
    await recordPayment(tx, deps, spaceId, invoiceId, {
      amount: formatAmount(openAmountOf(row)),
      note: 'The client said "I paid" in chat; confirmed in the app.',
    });
  }
  const updated = defined(await store.findInvoice(tx, spaceId, invoiceId), 'the invoice just updated');
  const todayText = utcDateOf(deps.clock.now());
  return present(updated, await store.listPayments(tx, invoiceId), deps.publicUrl, todayText);
}
