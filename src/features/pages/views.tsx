import type { ComponentChildren } from 'preact';
import type { PeopleFormat } from '../../core/people-format.ts';
import { networkLabel } from '../../platform/chain/networks.ts';
import { DateTime, Money, PeopleFormatProvider } from '../../platform/web/components.tsx';
import { renderDocument } from '../../platform/web/render.ts';
import { InvoiceDocument, type InvoiceRow } from '../invoices/index.ts';
import { BankTransfer, type BankTransferView } from './bank-transfer.tsx';
import type { Rails } from './domain.ts';
import { QrCode } from './qr-code.tsx';
import { FromQuote, QuoteBody, type QuotePageModel, SellerLogo } from './quote-page.tsx';

// Server-rendered public pages: small, fast, no framework. TSX, so every value that came from a
// user or a client is escaped by the renderer; the only scripts are files (assets/), so the CSP
// can forbid inline scripts.

const STYLE = `
  body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1d21}
  main{max-width:34rem;margin:2rem auto;padding:0 1rem}
  .card{background:#fff;border:1px solid #dfe2e7;border-radius:10px;padding:1.25rem;margin:1rem 0}
  h1{font-size:1.4rem;margin:.2rem 0} h2{font-size:1.05rem;margin:0 0 .6rem}
  .amount{font-size:2rem;font-weight:650} .muted{color:#5c6370;font-size:.9rem}
  code{background:#f0f1f4;padding:.1rem .3rem;border-radius:4px;word-break:break-all}
  label{display:block;margin:.5rem 0 .2rem} input{font:inherit;padding:.45rem;width:100%;box-sizing:border-box}
  button{font:inherit;margin-top:.8rem;padding:.55rem 1rem;border:0;border-radius:6px;background:#1a7f5a;color:#fff;cursor:pointer}
  table{width:100%;border-collapse:collapse} td,th{padding:.35rem .2rem;border-bottom:1px solid #eceef2;text-align:left}
  td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
  .status{display:inline-block;padding:.1rem .5rem;border-radius:99px;background:#fef0c7;color:#7a4f00;font-size:.85rem}
  .status.cancelled,.status.void{background:#fbe9e9;color:#9b2222}
  #card-result{margin-top:.6rem}
  .status.paid{background:#146c4c;color:#fff} .status.expired{background:#eceef2;color:#4d535e}
  .paid-note{font-size:1.15rem;font-weight:600;color:#1a7f5a}
  .qr{width:200px;max-width:100%} .qr svg{display:block;width:100%;height:auto}
  .wallets{display:flex;flex-wrap:wrap;gap:.5rem} .wallets button{display:inline-flex;align-items:center;gap:.5rem}
  .wallets img{width:20px;height:20px}
  dl.transfer{margin:.6rem 0} .copy-row{margin:.45rem 0} .copy-row dt{color:#5c6370;font-size:.85rem}
  .copy-row dd{margin:0;display:flex;gap:.5rem;align-items:center;flex-wrap:wrap}
  .copy-row code{font-size:1rem} button.copy{margin:0;padding:.2rem .6rem;font-size:.85rem;background:#e8f5ef;color:#11573d}
  .girocode img.qr{display:block;width:200px;height:200px;image-rendering:pixelated}
  p.details{white-space:pre-line}
  a.open-wallet{display:inline-block;margin-top:.4rem;color:#1a5f9f}
`;

/** The pay page's scripts, served by routes.ts from assets/. */
const PAY_SCRIPTS = [
  '/assets/pay.js',
  '/assets/pay-status.js',
  '/assets/pay-wallet.js',
  '/assets/pay-copy.js',
];

/**
 * A public page's frame. It writes dates and amounts in the book's time zone and locale when it
 * knows the book (`format`); the not-found page, which knows none, writes in UTC and English.
 */
function PublicPage(props: {
  title: string;
  format?: PeopleFormat;
  scripts?: string[];
  children: ComponentChildren;
}) {
  const body = <main>{props.children}</main>;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{props.title}</title>
        <style>{STYLE}</style>
      </head>
      <body>
        {props.format ? <PeopleFormatProvider format={props.format}>{body}</PeopleFormatProvider> : body}
        {(props.scripts ?? []).map((src) => (
          <script src={src} defer />
        ))}
      </body>
    </html>
  );
}

export type PayPageModel = {
  token: string;
  /** The book's time zone and locale: the amounts below are already written in its locale. */
  format: PeopleFormat;
  /** Amounts are spelled for people, currency included ("2.50 USD"). */
  amount: string;
  open: string;
  /** What has arrived so far, when anything has. */
  received: string | null;
  /** The open amount in the stablecoin account's currency ("2.50 USDC"). */
  stablecoinOpen: string;
  currency: string;
  memo: string;
  status: string;
  /** The business as payers know it: its trading name (features/spaces' displayNameOf). */
  seller: string;
  /** The book's logo, when it has one. */
  logoUrl: string | null;
  rails: Rails;
  /** The bank transfer, when a bank account of the space takes this request's currency. */
  bank: BankTransferView | null;
  /** Stripe Checkout takes this request's open amount: the page shows "Pay by card". */
  cardCheckout?: boolean;
  /** The payer is back from Checkout (`?card=returned`): the payment may still be confirming. */
  cardReturned?: boolean;
  /** What the QR code encodes: the EIP-681 transfer, or the bare address. */
  qrText: string | null;
  /** The transfer an injected browser wallet is asked to send; null when the chain is unknown here. */
  wallet: {
    uri: string;
    chainIdHex: string;
    networkName: string;
    token: string;
    recipient: string;
    data: string;
    localRpcUrl: string | null;
  } | null;
};

const STATUS_LABELS: Record<string, string> = {
  active: 'Awaiting payment',
  paid: 'Paid',
  expired: 'Expired',
  cancelled: 'Cancelled',
};

/** An invoice's status on its public page, as its client reads it. */
const INVOICE_STATUS_WORDS: Record<string, string> = {
  sent: 'Awaiting payment',
  partial: 'Partly paid',
  paid: 'Paid',
  issued: 'Issued',
  void: 'Void',
};

/** The request's status as a person reads it; the raw status stays in data-status. */
export function statusLabel(status: string): string {
  return STATUS_LABELS[status] ?? status;
}

/** The "Pay with wallet" block: filled by /assets/pay-wallet.js with one button per wallet found. */
function WalletBlock({ model }: { model: PayPageModel }) {
  const wallet = model.wallet;
  if (!wallet) return null;
  return (
    <div
      id="wallet-pay"
      data-chain-id={wallet.chainIdHex}
      data-chain-name={wallet.networkName}
      data-token={wallet.token}
      data-recipient={wallet.recipient}
      data-data={wallet.data}
      data-rpc-url={wallet.localRpcUrl ?? ''}
      data-amount-label={model.stablecoinOpen}
    >
      <p>
        <a class="open-wallet" id="wallet-link" href={wallet.uri}>
          Open in a wallet app
        </a>
      </p>
      <div class="wallets" id="wallet-choices" />
      <p class="muted" id="wallet-none" hidden>
        No browser wallet found. Scan the code with your phone's wallet, or send from any wallet to the
        address above.
      </p>
      <p id="wallet-result" role="status" />
    </div>
  );
}

function StablecoinSection({ model }: { model: PayPageModel }) {
  const rail = model.rails.stablecoin;
  if (!rail) return null;
  const qrLabel = model.wallet
    ? 'QR code of the transfer: a wallet app opens it ready to send'
    : 'QR code of the address';
  return (
    <section class="card rail" id="rail-stablecoin">
      <h2>Stablecoin</h2>
      <p>
        Send exactly <strong>{model.stablecoinOpen}</strong> on{' '}
        <strong>{rail.account.network ? networkLabel(rail.account.network) : ''}</strong> to
      </p>
      <p>
        <code id="pay-to">{rail.account.address ?? ''}</code>
      </p>
      <p class="muted">
        Its last digits tell this request apart from others to the same address, and it counts as paid in
        full.
      </p>
      {model.qrText && (
        <div class="qr" id="pay-qr" role="img" aria-label={qrLabel} data-encodes={model.qrText}>
          <QrCode text={model.qrText} />
        </div>
      )}
      <WalletBlock model={model} />
    </section>
  );
}

/** How the payer reaches the bank account; null when the account has no requisites yet. */
export type { BankAccountView, BankTransferView } from './bank-transfer.tsx';

function CardSection({ model }: { model: PayPageModel }) {
  // Back from Checkout: no second button while Stripe confirms, so nobody pays twice by mistake.
  if (model.cardCheckout && model.cardReturned) {
    return (
      <section class="card" id="rail-card">
        <h2>Card</h2>
        <p id="card-confirming" role="status">
          Thank you. Stripe is confirming your card payment; this page shows it as paid once it is. Reload in
          a moment.
        </p>
      </section>
    );
  }
  if (model.cardCheckout) {
    return (
      <section class="card" id="rail-card">
        <h2>Card</h2>
        <form method="post" action={`/pay/${model.token}/checkout`}>
          <button type="submit" id="pay-by-card">
            Pay by card
          </button>
        </form>
        <p class="muted">You pay {model.open} on Stripe's secure page.</p>
      </section>
    );
  }
  return model.rails.card ? <CardForm model={model} /> : null;
}

/** The test card form (no card processor configured): /assets/pay.js posts it as JSON. */
function CardForm({ model }: { model: PayPageModel }) {
  return (
    <section class="card rail" id="rail-card">
      <h2>Card</h2>
      <form id="card-form" data-token={model.token}>
        <label for="card-number">Card number</label>
        <input id="card-number" name="number" inputmode="numeric" autocomplete="cc-number" required />
        <label for="card-exp">Expiry (MM/YY)</label>
        <input id="card-exp" name="exp" autocomplete="cc-exp" required />
        <label for="card-cvc">Security code</label>
        <input id="card-cvc" name="cvc" inputmode="numeric" autocomplete="cc-csc" required />
        <button type="submit">Pay {model.open}</button>
        <p class="muted">Test mode: 4242 4242 4242 4242 pays; 4000 0000 0000 0002 is declined.</p>
        <p id="card-result" role="status" />
      </form>
    </section>
  );
}

function PayHead({ model }: { model: PayPageModel }) {
  const showReceived = model.received !== null && model.received !== '' && model.status === 'active';
  return (
    <>
      <SellerLogo url={model.logoUrl} seller={model.seller} />
      <p class="muted">
        Payment to <strong id="seller">{model.seller}</strong>
      </p>
      <h1 class="amount" id="amount">
        {model.amount}
      </h1>
      {model.memo && <p id="memo">{model.memo}</p>}
      <p>
        <span class={`status ${model.status}`} id="status" data-status={model.status}>
          {statusLabel(model.status)}
        </span>
      </p>
      {showReceived ? (
        <p class="muted" id="received">
          Received so far: {model.received}
        </p>
      ) : (
        <p class="muted" id="received" hidden />
      )}
    </>
  );
}

function PayPage({ model }: { model: PayPageModel }) {
  if (model.status !== 'active') {
    return (
      <PublicPage title="Payment" format={model.format}>
        <div class="card">
          <PayHead model={model} />
          <p class="paid-note">
            {model.status === 'paid' ? 'Paid. Thank you.' : 'This request takes no more payments.'}
          </p>
        </div>
      </PublicPage>
    );
  }
  const anyRail =
    model.rails.stablecoin !== null || model.bank !== null || model.cardCheckout || model.rails.card;
  // The page asks for its status every few seconds and turns to Paid when any rail settles it.
  return (
    <PublicPage title="Payment" format={model.format} scripts={PAY_SCRIPTS}>
      <div class="card" id="pay-head" data-status-url={`/pay/${model.token}/status`}>
        <PayHead model={model} />
        <p class="paid-note" id="paid-note" role="status" hidden>
          Paid. Thank you.
        </p>
      </div>
      <StablecoinSection model={model} />
      {model.bank && <BankTransfer bank={model.bank} />}
      <CardSection model={model} />
      {!anyRail && <p>No way to pay is set up for this request.</p>}
    </PublicPage>
  );
}

export function payPage(model: PayPageModel): string {
  return renderDocument(<PayPage model={model} />);
}

export type CreditPageModel = {
  token: string;
  /** The book's time zone and locale; the amounts below are already written in its locale. */
  format: PeopleFormat;
  /** The Top up amounts offered (USD), empty while the client has made no call to top up for. */
  topUpChoices: readonly string[];
  /** The business as its clients know it: its trading name (features/spaces' displayNameOf). */
  seller: string;
  clientRef: string;
  balance: string;
  paidIn: string;
  /** `at` is the moment's ISO text, written by `DateTime` in the book's zone. */
  calls: { at: string; amount: string; memo: string; resource: string }[];
  topUps: { at: string; amount: string; rail: string }[];
};

/** A table of a credit's history: its rows, or one row saying there are none yet. */
function HistoryTable(props: { id: string; what: string; none: string; rows: string[][] }) {
  return (
    <table id={props.id}>
      <thead>
        <tr>
          <th>When</th>
          <th>{props.what}</th>
          <th class="num">Amount</th>
        </tr>
      </thead>
      <tbody>
        {props.rows.length === 0 ? (
          <tr>
            <td colspan={3} class="muted">
              {props.none}
            </td>
          </tr>
        ) : (
          props.rows.map(([at, what, amount]) => (
            <tr>
              <td>
                <DateTime at={at ?? null} />
              </td>
              <td>{what}</td>
              <td class="num">{amount}</td>
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}

function CreditPage({ model }: { model: CreditPageModel }) {
  return (
    <PublicPage title="Prepaid balance" format={model.format}>
      <div class="card">
        <p class="muted">
          Prepaid balance with <strong>{model.seller}</strong> for {model.clientRef}
        </p>
        <h1 class="amount" id="balance">
          {model.balance}
        </h1>
        <p class="muted">
          Paid in: <span id="paid-in">{model.paidIn}</span>
        </p>
        {model.topUpChoices.length > 0 && (
          <div class="actions" id="top-up">
            {model.topUpChoices.map((amount) => (
              <form method="post" action={`/credit/${model.token}/top-up?amount=${amount}`}>
                <button type="submit">
                  Top up <Money amount={amount} currency="USD" />
                </button>
              </form>
            ))}
          </div>
        )}
      </div>
      <section class="card">
        <h2>Calls</h2>
        <HistoryTable
          id="calls"
          what="What"
          none="No calls yet."
          rows={model.calls.map((call) => [call.at, call.resource || call.memo, call.amount])}
        />
      </section>
      <section class="card">
        <h2>Top-ups</h2>
        <HistoryTable
          id="top-ups"
          what="How"
          none="No top-ups yet."
          rows={model.topUps.map((topUp) => [topUp.at, topUp.rail, topUp.amount])}
        />
      </section>
    </PublicPage>
  );
}

export function creditPage(model: CreditPageModel): string {
  return renderDocument(<CreditPage model={model} />);
}

export type InvoicePageModel = {
  token: string;
  /** The book's time zone and locale, which the invoice's dates and amounts are written in. */
  format: PeopleFormat;
  number: string;
  /** The invoice as stored: the invoices feature draws its document. */
  invoice: InvoiceRow;
  seller: string;
  /** The book's logo, when it has one. */
  logoUrl: string | null;
  /** The quote an invoice was made from. */
  quoteNumber: string | null;
  status: string;
  open: string;
  currency: string;
  payable: boolean;
  /** Stripe Checkout takes the open amount: the page also offers "Pay by card". */
  cardCheckout?: boolean;
  problem?: string | undefined;
};

function InvoicePage({ model }: { model: InvoicePageModel }) {
  return (
    <PublicPage title={`Invoice ${model.number}`} format={model.format}>
      <div class="card">
        <SellerLogo url={model.logoUrl} seller={model.seller} />
        <InvoiceDocument row={model.invoice} />
        <FromQuote number={model.quoteNumber} />
      </div>
      <div class="card">
        <p>
          Status{' '}
          <span class={`status ${model.status}`} id="invoice-status" data-status={model.status}>
            {INVOICE_STATUS_WORDS[model.status] ?? model.status}
          </span>
        </p>
        <p>
          Open <strong id="invoice-open">{model.open}</strong>
        </p>
        {model.payable && (
          <form method="post" action={`/i/${model.token}/pay`}>
            <button type="submit" id="pay-invoice">
              Pay {model.open}
            </button>
          </form>
        )}
        {model.payable && model.cardCheckout && (
          <form method="post" action={`/i/${model.token}/pay?by=card`}>
            <button type="submit" id="pay-invoice-card">
              Pay by card
            </button>
          </form>
        )}
        {model.problem && (
          <p class="muted" id="invoice-problem">
            {model.problem}
          </p>
        )}
      </div>
    </PublicPage>
  );
}

/** The public invoice page: the invoice, what is open, and a button that opens its payment page. */
export function invoicePage(model: InvoicePageModel): string {
  return renderDocument(<InvoicePage model={model} />);
}

/** The quote's public page: the quote and the client's answer (quote-page.tsx). */
export function quotePage(model: QuotePageModel): string {
  return renderDocument(
    <PublicPage title={`Quote ${model.number}`} format={model.format}>
      <QuoteBody model={model} />
    </PublicPage>,
  );
}

/** A card payment that could not start: why, and the way back. */
export function cardProblemPage(detail: string, backUrl: string): string {
  return renderDocument(
    <PublicPage title="Card payment">
      <div class="card">
        <h1>The card payment did not start</h1>
        <p id="card-problem">{detail}</p>
        <p>
          <a href={backUrl}>Back</a>
        </p>
      </div>
    </PublicPage>,
  );
}

export function notFoundPage(): string {
  return renderDocument(
    <PublicPage title="Not found">
      <div class="card">
        <h1>Not found</h1>
        <p>There is nothing at this address.</p>
      </div>
    </PublicPage>,
  );
}
