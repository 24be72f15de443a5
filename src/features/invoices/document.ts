import { escapeHtml } from '../../core/html.ts';
import { formatAmountTrimmed } from '../../core/money.ts';
import { readAmount } from '../ledger/index.ts';
import { openAmountOf } from './domain.ts';
import type { InvoiceRow } from './store.ts';

// The invoice as a document: the mail's HTML and text parts, the PDF attached to it, and the
// public page's body. Every value from the seller or the client is escaped in HTML.

const money = (value: string, currency: string) => `${formatAmountTrimmed(readAmount(value))} ${currency}`;

/** The invoice body in HTML: seller, client, lines, totals. */
export function invoiceHtml(row: InvoiceRow): string {
  const lines = row.line_items
    .map(
      (line) =>
        `<tr><td>${escapeHtml(line.description)}</td><td class="num">${escapeHtml(line.quantity)} ${escapeHtml(line.unit)}</td>` +
        `<td class="num">${escapeHtml(line.unit_price)}</td><td class="num">${escapeHtml(money(line.amount, row.currency))}</td></tr>`,
    )
    .join('');
  return [
    `<h1>Invoice ${escapeHtml(row.number)}</h1>`,
    `<p>From <strong>${escapeHtml(row.seller_name)}</strong> to <strong>${escapeHtml(row.client_name)}</strong></p>`,
    `<p>Issued ${escapeHtml(row.issued_on)}, due ${escapeHtml(row.due_on)}</p>`,
    '<table><thead><tr><th>Item</th><th class="num">Qty</th><th class="num">Price</th><th class="num">Amount</th></tr></thead>',
    `<tbody>${lines}</tbody></table>`,
    `<p>Subtotal ${escapeHtml(money(row.subtotal, row.currency))}, tax ${escapeHtml(money(row.tax_total, row.currency))}</p>`,
    `<p><strong>Total ${escapeHtml(money(row.total, row.currency))}</strong></p>`,
  ].join('\n');
}

/** The mail sent with the invoice: a note, the invoice, and the link to pay it. */
export function invoiceMail(row: InvoiceRow, pageUrl: string, message: string, purpose: 'send' | 'remind') {
  const subject =
    purpose === 'send'
      ? `Invoice ${row.number} from ${row.seller_name}`
      : `Reminder: invoice ${row.number} from ${row.seller_name}`;
  const open = formatAmountTrimmed(openAmountOf(row));
  const note = message === '' ? '' : `<p>${escapeHtml(message)}</p>`;
  const html = `<!doctype html><html><body>${note}${invoiceHtml(row)}
<p><a href="${escapeHtml(pageUrl)}">View and pay the invoice</a> (${escapeHtml(open)} ${escapeHtml(row.currency)} open)</p></body></html>`;
  const text = [
    message,
    `Invoice ${row.number} from ${row.seller_name}`,
    `Total ${money(row.total, row.currency)}, open ${open} ${row.currency}, due ${row.due_on}.`,
    `View and pay: ${pageUrl}`,
  ]
    .filter((part) => part !== '')
    .join('\n\n');
  return { subject, html, text };
}
