import { randomUUID } from 'node:crypto';
import { randomSecret } from '../../platform/crypto.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { addDays, freshInvoiceState, visibleStatus } from './domain.ts';
import { type InvoicesDeps, nextFreeNumber, ownInvoice, refuseMove, today } from './lifecycle.ts';
import { presentWithPayments } from './presentation.ts';
import { paymentTermsDays } from './seller.ts';
import * as store from './store.ts';

// Quotes: accepted (it becomes a draft invoice) or declined by the seller.

/** POST .../accept and .../decline: a sent quote before its due date; past it, it reads expired. */
export async function decideQuote(
  tx: Queryable,
  deps: InvoicesDeps,
  spaceId: string,
  id: string,
  decision: 'accept' | 'decline',
) {
  const row = await ownInvoice(tx, spaceId, id, true);
  const status = visibleStatus(row.status, row.due_on, today(deps.clock));
  refuseMove(decision, { ...row, status });
  const invoice = decision === 'accept' ? await invoiceFromQuote(tx, deps, row) : null;
  const updated = await store.updateInvoice(tx, spaceId, id, {
    status: decision === 'accept' ? 'quote_accepted' : 'quote_declined',
    ...(invoice ? { invoice_id: invoice.id } : {}),
    updated_at: deps.clock.now(),
  });
  return presentWithPayments(tx, updated, deps.publicUrl, today(deps.clock));
}

/**
 * An accepted quote becomes a draft invoice: the same client, seller, account, lines and totals,
 * a generated number, issued today and due after the book's payment terms. The seller sends it
 * when ready.
 */
async function invoiceFromQuote(tx: Queryable, deps: InvoicesDeps, quote: store.InvoiceRow) {
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
