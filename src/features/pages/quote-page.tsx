// The quote's public page (/i/{token} of a sent quote): the quote, and the client's answer. The
// client types their name and accepts or declines; once answered, the page says who answered
// and when, and for an accepted quote the number of the invoice that follows.

import type { PeopleFormat } from '../../core/people-format.ts';
import { DateTime } from '../../platform/web/components.tsx';

export type QuotePageModel = {
  token: string;
  /** The book's time zone and locale; the amounts below are already written in its locale. */
  format: PeopleFormat;
  number: string;
  seller: string;
  /** The book's logo, when it has one (a same-origin address). */
  logoUrl: string | null;
  clientName: string;
  /** Dates alone (YYYY-MM-DD), written as days by `DateTime`. */
  issuedOn: string;
  validUntil: string;
  lines: { description: string; quantity: string; unitPrice: string; amount: string }[];
  subtotal: string;
  tax: string;
  total: string;
  notes: string;
  /** The status as shown: quote_sent, quote_accepted, quote_declined or quote_expired. */
  status: string;
  /** The moment of the answer (ISO), written in the book's zone. */
  decidedAt: string | null;
  decidedBy: string;
  /** The invoice made from an accepted quote. */
  invoiceNumber: string | null;
  /** Why the last answer was refused, shown above the form. */
  problem?: string | undefined;
  /** The name as typed, shown again after a refusal. */
  name?: string | undefined;
};

/** The business's logo at the top of a public page. */
export function SellerLogo({ url, seller }: { url: string | null; seller: string }) {
  if (url === null) return null;
  return (
    <p class="logo">
      <img id="seller-logo" src={url} alt={`${seller} logo`} style="max-width:160px;max-height:64px" />
    </p>
  );
}

/** "From quote QUO-…" on the public page of an invoice made from an accepted quote. */
export function FromQuote({ number }: { number: string | null }) {
  return number === null ? null : <p id="from-quote">From quote {number}</p>;
}

function Answer({ model }: { model: QuotePageModel }) {
  switch (model.status) {
    case 'quote_accepted':
      return (
        <p class="paid-note" id="quote-answer">
          Accepted{model.decidedBy ? ` by ${model.decidedBy}` : ''}
          {model.decidedAt && (
            <>
              {' on '}
              <DateTime at={model.decidedAt} />
            </>
          )}
          .{model.invoiceNumber && <span id="quote-invoice"> Invoice {model.invoiceNumber} follows.</span>}
        </p>
      );
    case 'quote_declined':
      return (
        <p id="quote-answer">
          Declined{model.decidedBy ? ` by ${model.decidedBy}` : ''}
          {model.decidedAt && (
            <>
              {' on '}
              <DateTime at={model.decidedAt} />
            </>
          )}
          .
        </p>
      );
    case 'quote_expired':
      return (
        <p id="quote-answer">
          This quote was valid until <DateTime at={model.validUntil} />; it can no longer be accepted.
        </p>
      );
    default:
      return (
        <form method="post" action={`/i/${model.token}/accept`} id="quote-form">
          <label for="quote-name">Your name</label>
          <input
            id="quote-name"
            name="name"
            required
            maxLength={200}
            autocomplete="name"
            value={model.name}
          />
          <p class="muted">Your name and the time are recorded with your answer.</p>
          <div class="wallets">
            <button type="submit" id="quote-accept">
              Accept the quote
            </button>
            <button
              type="submit"
              id="quote-decline"
              formaction={`/i/${model.token}/decline`}
              style="background:#6b7280"
            >
              Decline
            </button>
          </div>
        </form>
      );
  }
}

const STATUS_WORDS: Record<string, string> = {
  quote_sent: 'Awaiting your answer',
  quote_accepted: 'Accepted',
  quote_declined: 'Declined',
  quote_expired: 'Expired',
};

/** The quote's page body (the layout around it is the public pages' own). */
export function QuoteBody({ model }: { model: QuotePageModel }) {
  return (
    <>
      <div class="card">
        <SellerLogo url={model.logoUrl} seller={model.seller} />
        <p class="muted">
          Quote from <strong id="seller">{model.seller}</strong> to <strong>{model.clientName}</strong>
        </p>
        <h1>Quote {model.number}</h1>
        <p class="muted">
          Issued <DateTime at={model.issuedOn} />, valid until <DateTime at={model.validUntil} />
        </p>
        <table id="quote-lines">
          <thead>
            <tr>
              <th>Item</th>
              <th class="num">Qty</th>
              <th class="num">Price</th>
              <th class="num">Amount</th>
            </tr>
          </thead>
          <tbody>
            {model.lines.map((line) => (
              <tr>
                <td>{line.description}</td>
                <td class="num">{line.quantity}</td>
                <td class="num">{line.unitPrice}</td>
                <td class="num">{line.amount}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <p>
          Subtotal {model.subtotal}, tax {model.tax}
        </p>
        <p>
          <strong>
            Total <span id="quote-total">{model.total}</span>
          </strong>
        </p>
        {model.notes && <p class="details">{model.notes}</p>}
      </div>
      <div class="card">
        <p>
          Status{' '}
          <span class="status" id="quote-status" data-status={model.status}>
            {STATUS_WORDS[model.status] ?? model.status}
          </span>
        </p>
        {model.problem && (
          <p id="quote-problem" role="alert">
            {model.problem}
          </p>
        )}
        <Answer model={model} />
      </div>
    </>
  );
}
