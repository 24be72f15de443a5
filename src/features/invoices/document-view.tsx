import { asAmount, formatAmountTrimmed } from '../../core/money.ts';
import { renderDocument } from '../../platform/web/render.ts';
import { readAmount } from '../ledger/index.ts';
import { openAmountOf } from './domain.ts';
import type { InvoiceRow } from './store.ts';

// The document in HTML: its body (seller, client, lines, totals), shown on the public invoice
// page and in the mail that sends or reminds it (an invoice or a quote) or sends it (a credit
// note, which has no public page: its mail carries no link). TSX, so every value from the
// seller or the client is escaped by the renderer.

const money = (value: string, currency: string) => `${formatAmountTrimmed(readAmount(value))} ${currency}`;

const TITLES: Record<InvoiceRow['kind'], string> = {
  invoice: 'Invoice',
  quote: 'Quote',
  credit_note: 'Credit note',
};

/** When the document was issued, and when it is due (an invoice) or valid until (a quote). */
function datesLine(row: InvoiceRow): string {
  // A credit note has no due date (its stored one is its issue date).
  if (row.kind === 'credit_note') return `Issued ${row.issued_on}`;
  if (row.kind === 'quote') return `Issued ${row.issued_on}, valid until ${row.due_on}`;
  return `Issued ${row.issued_on}, due ${row.due_on}`;
}

/** The invoice body: seller, client, lines, totals. */
export function InvoiceDocument({ row }: { row: InvoiceRow }) {
  return (
    <>
      <h1>
        {TITLES[row.kind]} {row.number}
      </h1>
      <p>
        From <strong>{row.seller_name}</strong> to <strong>{row.client_name}</strong>
      </p>
      {/* A credit note has no due date (its stored one is its issue date). */}
      <p>{datesLine(row)}</p>
      <table>
        <thead>
          <tr>
            <th>Item</th>
            <th class="num">Qty</th>
            <th class="num">Price</th>
            <th class="num">Amount</th>
          </tr>
        </thead>
        <tbody>
          {row.line_items.map((line) => (
            <tr>
              <td>{line.description}</td>
              <td class="num">{`${line.quantity} ${line.unit}`}</td>
              <td class="num">{line.unit_price}</td>
              <td class="num">{money(line.amount, row.currency)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p>
        Subtotal {money(row.subtotal, row.currency)}, tax {money(row.tax_total, row.currency)}
      </p>
      <p>
        <strong>Total {money(row.total, row.currency)}</strong>
      </p>
    </>
  );
}

function InvoiceMailBody(props: { row: InvoiceRow; pageUrl: string; message: string; open: string }) {
  return (
    <html lang="en">
      <body>
        {props.message !== '' && <p>{props.message}</p>}
        <InvoiceDocument row={props.row} />
        <p>
          <a href={props.pageUrl}>View and pay the invoice</a> ({props.open} {props.row.currency} open)
        </p>
      </body>
    </html>
  );
}

function QuoteMailBody(props: { row: InvoiceRow; pageUrl: string; message: string }) {
  return (
    <html lang="en">
      <body>
        {props.message !== '' && <p>{props.message}</p>}
        <InvoiceDocument row={props.row} />
        <p>
          <a href={props.pageUrl}>View the quote to accept or decline it</a> (valid until {props.row.due_on})
        </p>
      </body>
    </html>
  );
}

/** The mail that sends a quote: a note, the quote, and the link to accept or decline it. */
export function quoteMail(row: InvoiceRow, pageUrl: string, message: string) {
  const subject = `Quote ${row.number} from ${row.seller_name}`;
  const html = renderDocument(<QuoteMailBody row={row} pageUrl={pageUrl} message={message} />);
  const text = [
    message,
    subject,
    `Total ${money(row.total, row.currency)}, valid until ${row.due_on}.`,
    `Accept or decline it here: ${pageUrl}`,
  ]
    .filter((part) => part !== '')
    .join('\n\n');
  return { subject, html, text };
}

function CreditNoteMailBody(props: { row: InvoiceRow; corrects: string | null; message: string }) {
  return (
    <html lang="en">
      <body>
        {props.message !== '' && <p>{props.message}</p>}
        <InvoiceDocument row={props.row} />
        {props.corrects !== null && <p>This credit note corrects invoice {props.corrects}.</p>}
        <p>The credit note is attached as a PDF.</p>
      </body>
    </html>
  );
}

/** The mail that sends a credit note: a note, the credit note, the invoice it corrects; no link. */
export function creditNoteMail(row: InvoiceRow, corrects: string | null, message: string) {
  const subject = `Credit note ${row.number} from ${row.seller_name}`;
  const html = renderDocument(<CreditNoteMailBody row={row} corrects={corrects} message={message} />);
  const text = [
    message,
    subject,
    corrects === null ? '' : `It corrects invoice ${corrects}.`,
    `Total ${money(row.total, row.currency)}. The credit note is attached as a PDF.`,
  ]
    .filter((part) => part !== '')
    .join('\n\n');
  return { subject, html, text };
}

/** The mail sent with the invoice: a note, the invoice, and the link to pay it. */
export function invoiceMail(row: InvoiceRow, pageUrl: string, message: string, purpose: 'send' | 'remind') {
  const subject =
    purpose === 'send'
      ? `Invoice ${row.number} from ${row.seller_name}`
      : `Reminder: invoice ${row.number} from ${row.seller_name}`;
  const open = formatAmountTrimmed(asAmount(openAmountOf(row)));
  const html = renderDocument(<InvoiceMailBody row={row} pageUrl={pageUrl} message={message} open={open} />);
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
