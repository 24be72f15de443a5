import { WRITER_ROLES } from '../../core/roles.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { requireRole } from '../spaces/index.ts';
import type { DocumentAuthor } from './lifecycle.ts';
import type { InvoiceCreateBody, InvoicePatchBody, PaymentBody, SendBody } from './schemas.ts';
import {
  createInvoice,
  decideQuote,
  type InvoicesDeps,
  recordPayment,
  remindInvoice,
  reviseInvoice,
  sendInvoice,
  voidInvoice,
} from './service.ts';

// What a person does to invoices from the owner's app (its API and its pages): the same use
// cases the integration routes run, behind the person's role instead of a key's scope. Owners,
// admins and members write; a viewer is refused (403). Writing off stays owners' and admins'
// (writeOffInvoice checks it).

async function asWriter<T>(
  deps: InvoicesDeps,
  userId: string,
  spaceId: string,
  write: (tx: Queryable) => Promise<T>,
): Promise<T> {
  await requireRole(deps.db, spaceId, userId, WRITER_ROLES);
  return deps.db.transaction().execute(write);
}

/**
 * A document made in the app belongs to no key: its key_id is null, so invoice.paid goes to the
 * book's subscriptions only, never to a key's webhook address.
 */
function appAuthor(spaceId: string): DocumentAuthor {
  return { spaceId, keyId: null };
}

export function createInvoiceInApp(
  deps: InvoicesDeps,
  userId: string,
  spaceId: string,
  body: InvoiceCreateBody,
) {
  return asWriter(deps, userId, spaceId, (tx) => createInvoice(tx, deps, appAuthor(spaceId), body));
}

export function sendInvoiceInApp(
  deps: InvoicesDeps,
  userId: string,
  spaceId: string,
  id: string,
  body: SendBody,
) {
  return asWriter(deps, userId, spaceId, (tx) => sendInvoice(tx, deps, spaceId, id, body));
}

export function recordPaymentInApp(
  deps: InvoicesDeps,
  userId: string,
  spaceId: string,
  id: string,
  body: PaymentBody,
) {
  return asWriter(deps, userId, spaceId, (tx) => recordPayment(tx, deps, spaceId, id, body));
}

export function voidInvoiceInApp(
  deps: InvoicesDeps,
  userId: string,
  spaceId: string,
  id: string,
  reason: string,
) {
  return asWriter(deps, userId, spaceId, (tx) => voidInvoice(tx, deps, spaceId, id, reason));
}

export function remindInvoiceInApp(
  deps: InvoicesDeps,
  userId: string,
  spaceId: string,
  id: string,
  message: string,
) {
  return asWriter(deps, userId, spaceId, (tx) => remindInvoice(tx, deps, spaceId, id, message));
}

export function decideQuoteInApp(
  deps: InvoicesDeps,
  userId: string,
  spaceId: string,
  id: string,
  decision: 'accept' | 'decline',
) {
  return asWriter(deps, userId, spaceId, (tx) => decideQuote(tx, deps, spaceId, id, decision));
}

export function reviseInvoiceInApp(
  deps: InvoicesDeps,
  userId: string,
  spaceId: string,
  id: string,
  patch: InvoicePatchBody,
) {
  return asWriter(deps, userId, spaceId, (tx) => reviseInvoice(tx, deps, spaceId, id, patch));
}
