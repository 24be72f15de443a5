import type { ComponentChildren } from 'preact';
import {
  asAmount,
  formatAmount,
  formatDecimalTextForPeople,
  formatMoneyTextForPeople,
} from '../../core/money.ts';
import { formatCalendarDateForPeople, type PeopleFormat } from '../../core/people-format.ts';
import {
  contextFormat,
  DateTime,
  Money,
  type PeopleContext,
  PeopleFormatProvider,
} from '../../platform/web/components.tsx';
import { renderDocument } from '../../platform/web/render.ts';
import { openAmountOf } from './domain.ts';
import type { InvoiceRow } from './store.ts';

// The document in HTML: its body (seller, client, lines, totals), shown on the public invoice
// page and in the mail that sends or reminds it (an invoice or a quote) or sends it (a credit
// note, which has no public page: its mail carries no link). TSX, so every value from the
// seller or the client is escaped by the renderer. Dates and amounts are written in the book's
// time zone and locale (`PeopleFormatProvider`: the public page provides it, and each mail below).

/** An amount in the plain-text part of a mail, as `Money` writes it in the HTML part. */
const moneyText = (value: string, currency: string, format: PeopleFormat) =>
  formatMoneyTextForPeople(value, currency, format.locale) ?? `${value} ${currency}`;

/** A date alone in the plain-text part of a mail, as `DateTime` writes it in the HTML part. */
const dayText = (date: string, format: PeopleFormat) => formatCalendarDateForPeople(date, format.locale);

/** A mail's HTML part, written in the book's time zone and locale. */
function MailHtml(props: { format: PeopleFormat; children: ComponentChildren }) {
  return (
    <html lang="en">
      <body>
        <PeopleFormatProvider format={props.format}>{props.children}</PeopleFormatProvider>
      </body>
    </html>
  );
}

const TITLES: Record<InvoiceRow['kind'], string> = {
  invoice: 'Invoice',
  quote: 'Quote',
  credit_note: 'Credit note',
};

/** When the document was issued, and when it is due (an invoice) or valid until (a quote). */
function DatesLine({ row }: { row: InvoiceRow }) {
  const issued = <DateTime at={row.issued_on} />;
  // A credit note has no due date (its stored one is its issue date).
  if (row.kind === 'credit_note') return <p>Issued {issued}</p>;
  const due = <DateTime at={row.due_on} />;
  return (
    <p>
      Issued {issued}, {row.kind === 'quote' ? 'valid until' : 'due'} {due}
    </p>
  );
}

/** The invoice body: seller, client, lines, totals. */
export function InvoiceDocument({ row }: { row: InvoiceRow }, context?: PeopleContext) {
  const { locale } = contextFormat(context);
  const decimal = (text: string) => formatDecimalTextForPeople(text, locale) ?? text;
  return (
    <>
      <h1>
        {TITLES[row.kind]} {row.number}
      </h1>
      <p>
        From <strong>{row.seller_name}</strong> to <strong>{row.client_name}</strong>
      </p>
      <DatesLine row={row} />
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
              <td class="num">
                {line.unit ? `${decimal(line.quantity)} ${line.unit}` : decimal(line.quantity)}
              </td>
              <td class="num">{decimal(line.unit_price)}</td>
              <td class="num">
                <Money amount={line.amount} currency={row.currency} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p>
        Subtotal <Money amount={row.subtotal} currency={row.currency} />, tax{' '}
        <Money amount={row.tax_total} currency={row.currency} />
      </p>
      <p>
        <strong>
          Total <Money amount={row.total} currency={row.currency} />
        </strong>
      </p>
    </>
  );
}

function InvoiceMailBody(props: { row: InvoiceRow; pageUrl: string; message: string; open: string }) {
  return (
    <>
      {props.message !== '' && <p>{props.message}</p>}
      <InvoiceDocument row={props.row} />
      <p>
        <a href={props.pageUrl}>View and pay the invoice</a> (
        <Money amount={props.open} currency={props.row.currency} /> open)
      </p>
    </>
  );
}

function QuoteMailBody(props: { row: InvoiceRow; pageUrl: string; message: string }) {
  return (
    <>
      {props.message !== '' && <p>{props.message}</p>}
      <InvoiceDocument row={props.row} />
      <p>
        <a href={props.pageUrl}>View the quote to accept or decline it</a> (valid until{' '}
        <DateTime at={props.row.due_on} />)
      </p>
    </>
  );
}

/** The mail that sends a quote: a note, the quote, and the link to accept or decline it. */
export function quoteMail(row: InvoiceRow, pageUrl: string, message: string, format: PeopleFormat) {
  const subject = `Quote ${row.number} from ${row.seller_name}`;
  const html = renderDocument(
    <MailHtml format={format}>
      <QuoteMailBody row={row} pageUrl={pageUrl} message={message} />
    </MailHtml>,
  );
  const text = [
    message,
    subject,
    `Total ${moneyText(row.total, row.currency, format)}, valid until ${dayText(row.due_on, format)}.`,
    `Accept or decline it here: ${pageUrl}`,
  ]
    .filter((part) => part !== '')
    .join('\n\n');
  return { subject, html, text };
}

function CreditNoteMailBody(props: { row: InvoiceRow; corrects: string | null; message: string }) {
  return (
    <>
      {props.message !== '' && <p>{props.message}</p>}
      <InvoiceDocument row={props.row} />
      {props.corrects !== null && <p>This credit note corrects invoice {props.corrects}.</p>}
      <p>The credit note is attached as a PDF.</p>
    </>
  );
}

/** The mail that sends a credit note: a note, the credit note, the invoice it corrects; no link. */
export function creditNoteMail(
  row: InvoiceRow,
  corrects: string | null,
  message: string,
  format: PeopleFormat,
) {
  const subject = `Credit note ${row.number} from ${row.seller_name}`;
  const html = renderDocument(
    <MailHtml format={format}>
      <CreditNoteMailBody row={row} corrects={corrects} message={message} />
    </MailHtml>,
  );
  const text = [
    message,
    subject,
    corrects === null ? '' : `It corrects invoice ${corrects}.`,
    `Total ${moneyText(row.total, row.currency, format)}. The credit note is attached as a PDF.`,
  ]
    .filter((part) => part !== '')
    .join('\n\n');
  return { subject, html, text };
}

/** The mail sent with the invoice: a note, the invoice, and the link to pay it. */
export function invoiceMail(
  row: InvoiceRow,
  pageUrl: string,
  message: string,
  purpose: 'send' | 'remind',
  format: PeopleFormat,
) {
  const subject =
    purpose === 'send'
      ? `Invoice ${row.number} from ${row.seller_name}`
      : `Reminder: invoice ${row.number} from ${row.seller_name}`;
  const open = formatAmount(asAmount(openAmountOf(row)));
  const html = renderDocument(
    <MailHtml format={format}>
      <InvoiceMailBody row={row} pageUrl={pageUrl} message={message} open={open} />
    </MailHtml>,
  );
  const text = [
    message,
    `Invoice ${row.number} from ${row.seller_name}`,
    `Total ${moneyText(row.total, row.currency, format)}, open ${moneyText(open, row.currency, format)}, due ${dayText(row.due_on, format)}.`,
    `View and pay: ${pageUrl}`,
  ]
    .filter((part) => part !== '')
    .join('\n\n');
  return { subject, html, text };
}
