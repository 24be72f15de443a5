import { renderToString } from 'preact-render-to-string';
import { escapeHtml } from '../../core/html.ts';
import { BankTransfer, type BankTransferView } from './bank-transfer.tsx';
import type { Rails } from './domain.ts';
import { fromQuoteHtml, type QuotePageModel, quoteBodyHtml, sellerLogoHtml } from './quote-page.tsx';

// Server-rendered pages: small, fast, no framework. Every value that came from a user or a
// client is escaped; the only script is the card form's, served as a file so the CSP can forbid
// inline scripts.

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
  .status{display:inline-block;padding:.1rem .5rem;border-radius:99px;background:#e8f5ef;color:#1a7f5a;font-size:.85rem}
  .status.cancelled{background:#f6e8e8;color:#a12a2a}
  #card-result{margin-top:.6rem}
  .status.paid{background:#1a7f5a;color:#fff} .status.expired{background:#eceef2;color:#5c6370}
  .paid-note{font-size:1.15rem;font-weight:600;color:#1a7f5a}
  .qr{width:200px;max-width:100%} .qr svg{display:block;width:100%;height:auto}
  .wallets{display:flex;flex-wrap:wrap;gap:.5rem} .wallets button{display:inline-flex;align-items:center;gap:.5rem}
  .wallets img{width:20px;height:20px}
  dl.transfer{margin:.6rem 0} .copy-row{margin:.45rem 0} .copy-row dt{color:#5c6370;font-size:.85rem}
  .copy-row dd{margin:0;display:flex;gap:.5rem;align-items:center;flex-wrap:wrap}
  .copy-row code{font-size:1rem} button.copy{margin:0;padding:.2rem .6rem;font-size:.85rem;background:#e8f5ef;color:#1a7f5a}
  .girocode img.qr{display:block;width:200px;height:200px;image-rendering:pixelated}
  p.details{white-space:pre-line}
  a.open-wallet{display:inline-block;margin-top:.4rem;color:#1a5f9f}
`;

function layout(title: string, body: string, scripts: string[] = []): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main>${scripts.map((src) => `<script src="${src}" defer></script>`).join('')}</body></html>`;
}

export type PayPageModel = {
  token: string;
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
  qrSvg: string | null;
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

/** The request's status as a person reads it; the raw status stays in data-status. */
export function statusLabel(status: string): string {
  return STATUS_LABELS[status] ?? status;
}

/** The "Pay with wallet" block: filled by /assets/pay-wallet.js with one button per wallet found. */
function walletBlock(model: PayPageModel): string {
  const wallet = model.wallet;
  if (!wallet) return '';
  const attributes = [
    ['chain-id', wallet.chainIdHex],
    ['chain-name', wallet.networkName],
    ['token', wallet.token],
    ['recipient', wallet.recipient],
    ['data', wallet.data],
    ['rpc-url', wallet.localRpcUrl ?? ''],
    ['amount-label', model.stablecoinOpen],
  ]
    .map(([name, value]) => `data-${name}="${escapeHtml(value ?? '')}"`)
    .join(' ');
  return `<div id="wallet-pay" ${attributes}>
<p><a class="open-wallet" id="wallet-link" href="${escapeHtml(wallet.uri)}">Open in a wallet app</a></p>
<div class="wallets" id="wallet-choices"></div>
<p class="muted" id="wallet-none" hidden>No browser wallet found. Scan the code with your phone's wallet, or send from any wallet to the address above.</p>
<p id="wallet-result" role="status"></p></div>`;
}

function stablecoinSection(model: PayPageModel): string {
  const rail = model.rails.stablecoin;
  if (!rail) return '';
  const qrLabel = model.wallet
    ? 'QR code of the transfer: a wallet app opens it ready to send'
    : 'QR code of the address';
  return `<section class="card rail" id="rail-stablecoin"><h2>Stablecoin</h2>
<p>Send exactly <strong>${escapeHtml(model.stablecoinOpen)}</strong>
on <strong>${escapeHtml(rail.account.network ?? '')}</strong> to</p>
<p><code id="pay-to">${escapeHtml(rail.account.address ?? '')}</code></p>
<p class="muted">Its last digits tell this request apart from others to the same address, and it counts as paid in full.</p>
${model.qrSvg ? `<div class="qr" id="pay-qr" role="img" aria-label="${qrLabel}" data-encodes="${escapeHtml(model.qrText ?? '')}">${model.qrSvg}</div>` : ''}
${walletBlock(model)}</section>`;
}

/** How the payer reaches the bank account; null when the account has no requisites yet. */
export type { BankAccountView, BankTransferView } from './bank-transfer.tsx';

function bankSection(model: PayPageModel): string {
  return model.bank ? renderToString(BankTransfer({ bank: model.bank })) : '';
}

function cardSection(model: PayPageModel): string {
  // Back from Checkout: no second button while Stripe confirms, so nobody pays twice by mistake.
  if (model.cardCheckout && model.cardReturned) {
    return `<section class="card" id="rail-card"><h2>Card</h2>
<p id="card-confirming" role="status">Thank you. Stripe is confirming your card payment; this page shows it as paid once it is. Reload in a moment.</p></section>`;
  }
  if (model.cardCheckout) {
    return `<section class="card" id="rail-card"><h2>Card</h2>
<form method="post" action="/pay/${escapeHtml(model.token)}/checkout"><button type="submit" id="pay-by-card">Pay by card</button></form>
<p class="muted">You pay ${escapeHtml(model.open)} ${escapeHtml(model.currency)} on Stripe's secure page.</p></section>`;
  }
  if (!model.rails.card) return '';
  return `<section class="card rail" id="rail-card"><h2>Card</h2>
<form id="card-form" data-token="${escapeHtml(model.token)}">
<label for="card-number">Card number</label><input id="card-number" name="number" inputmode="numeric" autocomplete="cc-number" required>
<label for="card-exp">Expiry (MM/YY)</label><input id="card-exp" name="exp" autocomplete="cc-exp" required>
<label for="card-cvc">Security code</label><input id="card-cvc" name="cvc" inputmode="numeric" autocomplete="cc-csc" required>
<button type="submit">Pay ${escapeHtml(model.open)}</button>
<p class="muted">Test mode: 4242 4242 4242 4242 pays; 4000 0000 0000 0002 is declined.</p>
<p id="card-result" role="status"></p></form></section>`;
}

export function payPage(model: PayPageModel): string {
  const received =
    model.received && model.status === 'active'
      ? `<p class="muted" id="received">Received so far: ${escapeHtml(model.received)}</p>`
      : '<p class="muted" id="received" hidden></p>';
  const head = `${sellerLogoHtml(model.logoUrl, model.seller)}<p class="muted">Payment to <strong id="seller">${escapeHtml(model.seller)}</strong></p>
<h1 class="amount" id="amount">${escapeHtml(model.amount)}</h1>
${model.memo ? `<p id="memo">${escapeHtml(model.memo)}</p>` : ''}
<p><span class="status ${escapeHtml(model.status)}" id="status" data-status="${escapeHtml(model.status)}">${escapeHtml(statusLabel(model.status))}</span></p>
${received}`;
  if (model.status !== 'active') {
    const note = model.status === 'paid' ? 'Paid. Thank you.' : 'This request takes no more payments.';
    return layout('Payment', `<div class="card">${head}<p class="paid-note">${note}</p></div>`);
  }
  const rails = stablecoinSection(model) + bankSection(model) + cardSection(model);
  // The page asks for its status every few seconds and turns to Paid when any rail settles it.
  return layout(
    'Payment',
    `<div class="card" id="pay-head" data-status-url="/pay/${escapeHtml(model.token)}/status">${head}
<p class="paid-note" id="paid-note" role="status" hidden>Paid. Thank you.</p></div>
${rails || '<p>No way to pay is set up for this request.</p>'}`,
    ['/assets/pay.js', '/assets/pay-status.js', '/assets/pay-wallet.js', '/assets/pay-copy.js'],
  );
}

export type CreditPageModel = {
  handle: string;
  clientRef: string;
  balance: string;
  paidIn: string;
  calls: { at: string; amount: string; memo: string; resource: string }[];
  topUps: { at: string; amount: string; rail: string }[];
};

export function creditPage(model: CreditPageModel): string {
  const callRows = model.calls
    .map(
      (call) =>
        `<tr><td>${escapeHtml(call.at)}</td><td>${escapeHtml(call.resource || call.memo)}</td><td class="num">${escapeHtml(call.amount)}</td></tr>`,
    )
    .join('');
  const topUpRows = model.topUps
    .map(
      (topUp) =>
        `<tr><td>${escapeHtml(topUp.at)}</td><td>${escapeHtml(topUp.rail)}</td><td class="num">${escapeHtml(topUp.amount)}</td></tr>`,
    )
    .join('');
  const body = `<div class="card"><p class="muted">Prepaid balance with <strong>${escapeHtml(model.handle)}</strong> for ${escapeHtml(model.clientRef)}</p>
<h1 class="amount" id="balance">${escapeHtml(model.balance)}</h1><p class="muted">Paid in: <span id="paid-in">${escapeHtml(model.paidIn)}</span></p></div>
<section class="card"><h2>Calls</h2><table id="calls"><thead><tr><th>When</th><th>What</th><th class="num">Amount</th></tr></thead><tbody>${callRows || '<tr><td colspan="3" class="muted">No calls yet.</td></tr>'}</tbody></table></section>
<section class="card"><h2>Top-ups</h2><table id="top-ups"><thead><tr><th>When</th><th>How</th><th class="num">Amount</th></tr></thead><tbody>${topUpRows || '<tr><td colspan="3" class="muted">No top-ups yet.</td></tr>'}</tbody></table></section>`;
  return layout('Prepaid balance', body);
}

export type InvoicePageModel = {
  token: string;
  number: string;
  seller: string;
  /** The book's logo, when it has one. */
  logoUrl: string | null;
  /** The quote an invoice was made from. */
  quoteNumber: string | null;
  /** The invoice document, already escaped (rendered by the invoices feature). */
  documentHtml: string;
  status: string;
  open: string;
  currency: string;
  payable: boolean;
  /** Stripe Checkout takes the open amount: the page also offers "Pay by card". */
  cardCheckout?: boolean;
  problem?: string | undefined;
};

/** The public invoice page: the invoice, what is open, and a button that opens its payment page. */
export function invoicePage(model: InvoicePageModel): string {
  const pay = model.payable
    ? `<form method="post" action="/i/${escapeHtml(model.token)}/pay"><button type="submit" id="pay-invoice">Pay ${escapeHtml(model.open)}</button></form>`
    : '';
  const card =
    model.payable && model.cardCheckout
      ? `<form method="post" action="/i/${escapeHtml(model.token)}/pay?by=card"><button type="submit" id="pay-invoice-card">Pay by card</button></form>`
      : '';
  const problem = model.problem
    ? `<p class="muted" id="invoice-problem">${escapeHtml(model.problem)}</p>`
    : '';
  return layout(
    `Invoice ${model.number}`,
    `<div class="card">${sellerLogoHtml(model.logoUrl, model.seller)}${model.documentHtml}${fromQuoteHtml(model.quoteNumber)}</div>
<div class="card"><p>Status <span class="status" id="invoice-status">${escapeHtml(model.status)}</span></p>
<p>Open <strong id="invoice-open">${escapeHtml(model.open)}</strong></p>${pay}${card}${problem}</div>`,
  );
}

/** The quote's public page: the quote and the client's answer (quote-page.tsx). */
export function quotePage(model: QuotePageModel): string {
  return layout(`Quote ${model.number}`, quoteBodyHtml(model));
}

/** A card payment that could not start: why, and the way back. */
export function cardProblemPage(detail: string, backUrl: string): string {
  return layout(
    'Card payment',
    `<div class="card"><h1>The card payment did not start</h1><p id="card-problem">${escapeHtml(detail)}</p>
<p><a href="${escapeHtml(backUrl)}">Back</a></p></div>`,
  );
}

export function notFoundPage(): string {
  return layout(
    'Not found',
    '<div class="card"><h1>Not found</h1><p>There is nothing at this address.</p></div>',
  );
}

/**
 * The card form's script: posts the card as JSON and shows which of three ways it ended. An
 * answer of 2xx is paid; a 4xx is a definite no, with the server's words; no answer at all (the
 * connection failed), a 5xx or a body that is not JSON leave the outcome unknown, and the page
 * says so and asks the status poller instead of claiming the payment failed. Paying again is
 * safe: a request once paid refuses a second payment.
 */
export const PAY_SCRIPT = `(() => {
  const form = document.getElementById('card-form');
  if (!form) return;
  const result = document.getElementById('card-result');
  const button = form.querySelector('button');
  const UNKNOWN = 'We could not tell whether the payment went through. This page checks and turns to Paid if it did; if it still shows unpaid in a minute, pay again (a paid request is never charged twice).';
  async function attempt(data) {
    let res;
    try {
      res = await fetch('/pay/' + encodeURIComponent(form.dataset.token) + '/card', {
        method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(data),
      });
    } catch {
      return { kind: 'unknown' };
    }
    if (res.status >= 500) return { kind: 'unknown' };
    let body;
    try {
      body = await res.json();
    } catch {
      return res.ok ? { kind: 'paid' } : { kind: 'unknown' };
    }
    if (res.ok) return { kind: 'paid' };
    return { kind: 'refused', detail: body && typeof body.detail === 'string' ? body.detail : '' };
  }
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    // One payment at a time: a second click waits for the first answer.
    if (button.disabled) return;
    button.disabled = true;
    result.textContent = 'Paying…';
    const outcome = await attempt(Object.fromEntries(new FormData(form).entries()));
    result.dataset.outcome = outcome.kind;
    if (outcome.kind === 'paid') {
      result.textContent = 'Paid. Thank you.';
      // The status poller (pay-status.js) turns the whole page to Paid.
      document.dispatchEvent(new Event('tollbook:check-status'));
      return;
    }
    if (outcome.kind === 'unknown') {
      result.textContent = UNKNOWN;
      document.dispatchEvent(new Event('tollbook:check-status'));
    } else {
      result.textContent = outcome.detail || 'The payment did not go through.';
    }
    button.disabled = false;
  });
})();
`;
