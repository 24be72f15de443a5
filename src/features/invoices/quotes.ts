import { randomUUID } from 'node:crypto';
import { AppError } from '../../core/errors.ts';
import { randomSecret } from '../../platform/crypto.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { addDays, freshInvoiceState, quoteDecision, visibleStatus } from './domain.ts';
import { type InvoicesDeps, nextFreeNumber, ownInvoice, refuseMove, today } from './lifecycle.ts';
import { presentWithPayments } from './presentation.ts';
import { paymentTermsDays, withSellerShown } from './seller.ts';
import * as store from './store.ts';

// Quotes: accepted (it becomes a draft invoice) or declined, by the seller in the app or by the
// client on the quote's public page.

type Decision = 'accept' | 'decline';

/**
 * Moves a locked quote by the answer given: a sent quote before its date is accepted (a draft
 * invoice is made from it) or declined, with when and who. The same answer given again changes
 * nothing and answers the quote as it is; `refuse` says what any other case throws.
 */
async function decide(
  tx: Queryable,
  deps: Pick<InvoicesDeps, 'clock'>,
  row: store.InvoiceRow,
  decision: Decision,
  by: string,
  refuse: (status: store.InvoiceRow['status']) => never,
): Promise<store.InvoiceRow> {
  const status = visibleStatus(row.status, row.due_on, today(deps.clock));
  const outcome = row.kind === 'quote' ? quoteDecision(status, decision) : 'refuse';
  if (outcome === 'same') return row;
  if (outcome === 'refuse') refuse(status);
  const invoice = decision === 'accept' ? await invoiceFromQuote(tx, deps, row) : null;
  const now = deps.clock.now();
  return store.updateInvoice(tx, row.space_id, row.id, {
    status: decision === 'accept' ? 'quote_accepted' : 'quote_declined',
    ...(invoice ? { invoice_id: invoice.id } : {}),
    quote_decided_at: now,
    quote_decided_by: by,
    updated_at: now,
  });
}

/** POST .../accept and .../decline by the seller: a sent quote before its due date; past it, it reads expired. */
export async function decideQuote(
  tx: Queryable,
  deps: InvoicesDeps,
  spaceId: string,
  id: string,
  decision: Decision,
) {
  const row = await ownInvoice(tx, spaceId, id, true);
  const updated = await decide(tx, deps, row, decision, '', (status) => {
    refuseMove(decision, { ...row, status });
    throw new AppError('invoice_state', `This document is ${status}.`, { status, move: decision });
  });
  return presentWithPayments(tx, updated, deps.publicUrl, today(deps.clock));
}

/**
 * The client's answer on the quote's public page, with the name they typed. A quote declined,
 * expired or voided can no longer be accepted (409 conflict); answering again as before is a
 * no-op. An unknown token, or a quote not sent yet, is not found.
 */
export async function answerQuote(
  deps: Pick<InvoicesDeps, 'db' | 'clock' | 'publicUrl'>,
  token: string,
  decision: Decision,
  name: string,
): Promise<void> {
  await deps.db.transaction().execute(async (tx) => {
    const found = await store.findByToken(tx, token);
    if (found?.kind !== 'quote' || found.status === 'quote_draft')
      throw new AppError('not_found', 'No quote at this address.');
    const row = await ownInvoice(tx, found.space_id, found.id, true);
    await decide(tx, deps, row, decision, name, (status) => {
      throw new AppError('conflict', QUOTE_CLOSED[decision](status), { status });
    });
  });
}

const QUOTE_CLOSED: Record<Decision, (status: string) => string> = {
  accept: (status) =>
    status === 'quote_expired'
      ? 'This quote has expired; it can no longer be accepted. Ask for a new one.'
      : `This quote is ${status.replace('quote_', '')}; it can no longer be accepted.`,
  decline: (status) =>
    status === 'quote_expired'
      ? 'This quote has expired already.'
      : `This quote is ${status.replace('quote_', '')}; it can no longer be declined.`,
};

/**
 * A quote by its public token (its page at /i/{token}), with the seller it shows and the status
 * as shown; a quote not sent yet (or voided) has no public page.
 */
export async function quoteByToken(db: Queryable, token: string, todayText: string) {
  const found = await store.findByToken(db, token);
  if (found?.kind !== 'quote' || found.status === 'quote_draft' || found.status === 'void') return undefined;
  const row = await withSellerShown(db, found);
  const invoice = row.invoice_id ? await store.numbersOf(db, row.space_id, [row.invoice_id]) : [];
  return {
    row,
    status: visibleStatus(row.status, row.due_on, todayText),
    invoiceNumber: invoice[0]?.number ?? null,
  };
}

/**
 * An accepted quote becomes a draft invoice: the same client, seller, account, lines and totals,
 * a generated number, issued today and due after the book's payment terms. The seller sends it
 * when ready.
 */
async function invoiceFromQuote(tx: Queryable, deps: Pick<InvoicesDeps, 'clock'>, quote: store.InvoiceRow) {
  const now = deps.clock.now();
  const due = addDays(today(deps.clock), await paymentTermsDays(tx, quote.space_id));
  const { id: _quoteId, seq: _seq, ...fields } = quote as store.InvoiceRow & { seq?: unknown };
  return store.insertInvoice(tx, {
    ...fields,
    id: randomUUID(),
    kind: 'invoice',
    status: 'draft',
    number: await nextFreeNumber(tx, quote.space_id, 'invoice'),
    token: randomSecret('inv_'),
    issued_on: today(deps.clock),
    due_on: due,
    line_items: JSON.stringify(quote.line_items),
    tax_breakdown: JSON.stringify(quote.tax_breakdown),
    ...freshInvoiceState(now),
  });
}
