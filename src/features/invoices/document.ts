import PDFDocument from 'pdfkit';
import { escapeHtml } from '../../core/html.ts';
import { formatAmountTrimmed } from '../../core/money.ts';
import { readAmount } from '../ledger/index.ts';
import type { InvoiceRow } from './store.ts';

// The invoice as a document: the mail's HTML and text parts, the PDF attached to it, and the
// public page's body. Every value from the seller or the client is escaped in HTML.

const money = (value: string, currency: string) => `${formatAmountTrimmed(readAmount(value))} ${currency}`;

export function openAmountOf(row: InvoiceRow): bigint {
  const open = readAmount(row.total) - readAmount(row.credited_amount) - readAmount(row.paid_amount);
  return open > 0n ? open : 0n;
}

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
  const open = formatAmountTrimmed(openAmountOf(row) as never);
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

/**
 * The invoice as a PDF (pdfkit, its standard Helvetica: no font files needed). `corrects` is the
 * number of the invoice a credit note corrects.
 */
export function invoicePdf(row: InvoiceRow, corrects?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ size: 'A4', margin: 50, info: { Title: `Invoice ${row.number}` } });
    const chunks: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    doc.fontSize(20).text(`Invoice ${row.number}`);
    doc.moveDown().fontSize(11);
    doc.text(`From: ${row.seller_name}${row.seller_address ? `, ${row.seller_address}` : ''}`);
    doc.text(`To: ${row.client_name}${row.client_address ? `, ${row.client_address}` : ''}`);
    doc.text(`Issued ${row.issued_on}, due ${row.due_on}`);
    if (corrects) doc.text(`Corrects ${corrects}`);
    doc.moveDown();
    for (const line of row.line_items) {
      doc.text(
        `${line.description}  ${line.quantity} ${line.unit} x ${line.unit_price} = ${money(line.amount, row.currency)}`,
      );
    }
    doc.moveDown();
    doc.text(`Subtotal ${money(row.subtotal, row.currency)}`);
    doc.text(`Tax ${money(row.tax_total, row.currency)}`);
    doc.fontSize(13).text(`Total ${money(row.total, row.currency)}`);
    doc.end();
  });
}
