import { asAmount, formatAmountTrimmed } from '../../core/money.ts';
import { renderDocument } from '../../platform/web/render.ts';
import { readAmount } from '../ledger/index.ts';
import { openAmountOf } from './domain.ts';
import type { InvoiceRow } from './store.ts';

// The invoice in HTML: its body (seller, client, lines, totals), shown on the public invoice
// page and in the mail that sends or reminds it. TSX, so every value from the seller or the
// client is escaped by the renderer.

const money = (value: string, currency: string) => `${formatAmountTrimmed(readAmount(value))} ${currency}`;

/** The invoice body: seller, client, lines, totals. */
export function InvoiceDocument({ row }: { row: InvoiceRow }) {
  return (
    <>
      <h1>Invoice {row.number}</h1>
      <p>
        From <strong>{row.seller_name}</strong> to <strong>{row.client_name}</strong>
      </p>
      <p>
        Issued {row.issued_on}, due {row.due_on}
      </p>
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
