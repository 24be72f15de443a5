import { formatAmount, formatAmountTrimmed } from '../../core/money.ts';
import type { Queryable } from '../../platform/db/database.ts';
import type { StoredLineItem, StoredTaxGroup } from '../../platform/db/schema.ts';
import { readAmount } from '../ledger/index.ts';
import { formatRate, type InvoiceStatus, type Totals, visibleStatus } from './domain.ts';
import * as store from './store.ts';

/** A document's public page, where the client reads and pays it. */
export function publicPageUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/i/${token}`;
}

// How an invoice reads on the wire and in the app: its row, totals and payments spelled out.

const iso = (at: Date | null) => (at === null ? null : at.toISOString());

export function present(
  row: store.InvoiceRow,
  payments: readonly store.InvoicePaymentRow[],
  publicUrl: string,
  todayText: string,
) {
  return {
    ...row,
    status: visibleStatus(row.status as InvoiceStatus, row.due_on, todayText),
    total: formatAmount(readAmount(row.total)),
    subtotal: formatAmount(readAmount(row.subtotal)),
    tax_total: formatAmount(readAmount(row.tax_total)),
    paid_amount: formatAmount(readAmount(row.paid_amount)),
    credited_amount: formatAmount(readAmount(row.credited_amount)),
    card_payments_enabled: true,
    card_payments_live: false,
    delivered_in_app: row.delivered_in_app,
    tax_label: '',
    line_step: '',
    contested_at: null,
    contested_reason: '',
    payer_marked_paid_at: iso(row.payer_marked_paid_at),
    payment_withdrawn_at: null,
    promised_on: row.promised_on,
    reminders_paused_at: iso(row.reminders_paused_at),
    quote_decided_at: iso(row.quote_decided_at),
    created_at: row.created_at.toISOString(),
    url: publicPageUrl(publicUrl, row.token),
    payments: payments.map((payment) => ({
      id: payment.id,
      amount: formatAmount(readAmount(payment.amount)),
      account_id: payment.account_id,
      via: payment.via,
      note: payment.note,
      occurred_on: payment.occurred_on,
      tx_id: payment.tx_id,
      entry_id: payment.entry_id,
    })),
  };
}

export type InvoiceRecord = ReturnType<typeof present>;

export async function presentWithPayments(
  db: Queryable,
  row: store.InvoiceRow,
  publicUrl: string,
  todayText: string,
) {
  return present(row, await store.listPayments(db, row.id), publicUrl, todayText);
}

export function lineItemsOut(
  totals: Totals,
  body: { line_items: readonly { tax_rate?: string | undefined }[] },
): StoredLineItem[] {
  return totals.lines.map((line, index) => ({
    description: line.description,
    unit_price: formatAmountTrimmed(line.unitPrice),
    quantity: formatAmountTrimmed(line.quantity),
    tax_kind: line.taxKind,
    tax_rate: body.line_items[index]?.tax_rate ?? '',
    unit: line.unit,
    amount: formatAmount(line.amount),
  }));
}

export function breakdownOut(totals: Totals): StoredTaxGroup[] {
  return totals.breakdown.map((group) => ({
    tax_kind: group.taxKind,
    tax_rate: formatRate(group.taxRate),
    net: formatAmount(group.net),
    tax: formatAmount(group.tax),
  }));
}
