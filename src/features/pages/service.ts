import { randomUUID } from 'node:crypto';
import QRCode from 'qrcode';
import { epcPayload, groupedIban } from '../../core/bank-transfer.ts';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { hasSecretShape } from '../../core/ids.ts';
import {
  type AmountE8,
  asAmount,
  formatAmountTrimmed,
  formatDecimalTextForPeople,
  formatMoneyForPeople,
} from '../../core/money.ts';
import type { NetworkName, NetworkRegistry } from '../../platform/chain/networks.ts';
import { walletPayment } from '../../platform/chain/wallet-payment.ts';
import type { SecretBox } from '../../platform/crypto.ts';
import type { Db } from '../../platform/db/database.ts';
import { listSpaceAccounts } from '../accounts/index.ts';
import { type CardPaymentsDeps, cardTakes, openCheckout } from '../card-payments/index.ts';
import { canTopUp, TOP_UP_CHOICES, topUpFromBalancePage } from '../charges/index.ts';
import { creditPage } from '../client-credits/index.ts';
import type { Requisites } from '../contacts/index.ts';
import { answerQuote, documentLinks, invoiceByToken, quoteByToken } from '../invoices/index.ts';
import { readAmount } from '../ledger/index.ts';
import {
  activeRequestForInvoice,
  findRequestByToken,
  mintRequest,
  openAmount,
  openPrice,
  pegOf,
  presentRequest,
  type RequestRow,
  settlePaymentRequest,
} from '../payment-requests/index.ts';
import { framingOrigins } from '../sites/index.ts';
import { logoByDigest, logoUrlOf, peopleFormatOf, sellerFaceOf } from '../spaces/index.ts';
import type { Facilitator } from '../x402/index.ts';
import { type AccountView, judgeTestCard, type Rails, railsFor } from './domain.ts';
import type { QuotePageModel } from './quote-page.tsx';
import type {
  BankAccountView,
  BankTransferView,
  CreditPageModel,
  InvoicePageModel,
  PayPageModel,
} from './views.tsx';

export type PagesDeps = {
  db: Db;
  clock: Clock;
  publicUrl: string;
  production: boolean;
  facilitator: Facilitator;
  /** Seals the books' x402 receipt keys. */
  secrets: SecretBox;
  /** The card rail through Stripe Checkout, when Stripe's keys are configured. */
  card?: CardPaymentsDeps | undefined;
  /** The chain's configured networks, for the wallet rail's transfer; none without a chain. */
  networks?: NetworkRegistry | undefined;
};

/** A request by its token, or a 404 that says nothing about other requests. */
async function requestOr404(deps: PagesDeps, token: string): Promise<RequestRow> {
  // A garbled address is answered like an unknown one, without asking the database.
  const request = hasSecretShape(token, 'pr_') ? await findRequestByToken(deps.db, token) : undefined;
  if (!request) throw new AppError('not_found', 'No payment request at this address.');
  return request;
}

/** The pay page, and the origins it may be framed on (the space's proven sites). */
export async function payPage(deps: PagesDeps, token: string) {
  const model = await payPageModel(deps, token);
  return { model, frameOrigins: await framingOrigins(deps.db, model.spaceId) };
}

async function payPageModel(deps: PagesDeps, token: string): Promise<PayPageModel & { spaceId: string }> {
  const request = await requestOr404(deps, token);
  const record = presentRequest(request, deps.publicUrl, deps.clock.now());
  const accounts: AccountView[] = (await listSpaceAccounts(deps.db, request.space_id)).map((row) => ({
    ...row,
  }));
  // With Stripe configured, cards go through Checkout; without it, the development test card
  // exists outside production, and production offers no card at all.
  const cardCheckout = deps.card !== undefined && cardTakes(request.currency, openPrice(request));
  const rails = railsFor(
    { accountId: request.account_id, currency: request.currency, token },
    accounts,
    pegOf,
    !deps.production && deps.card === undefined,
  );
  const open = openAmount(request);
  const face = await sellerFaceOf(deps.db, request.space_id);
  const seller = face.profile.display_name;
  const format = face.format;
  const money = (amount: AmountE8, currency: string) => formatMoneyForPeople(amount, currency, format.locale);
  const received = readAmount(request.amount_received);
  const stablecoin = rails.stablecoin?.account;
  const wallet = stablecoin ? walletFor(deps, stablecoin, open) : undefined;
  // The QR carries the EIP-681 transfer when the network is known here; else the bare address.
  const qrText = wallet?.uri ?? stablecoin?.address;
  return {
    spaceId: request.space_id,
    token,
    format,
    amount: money(readAmount(request.amount), request.currency),
    open: money(openPrice(request), request.currency),
    received: received > 0n ? money(received, request.currency) : null,
    stablecoinOpen: stablecoin ? money(open, stablecoin.currency) : '',
    currency: request.currency,
    memo: request.memo,
    status: record.status,
    seller,
    logoUrl: await logoUrlOf(deps.db, request.space_id),
    rails,
    bank: await bankTransfer(rails.bank, seller, request.currency, open, format.locale),
    cardCheckout,
    qrText: qrText ?? null,
    wallet: wallet
      ? {
          uri: wallet.uri,
          chainIdHex: wallet.chainIdHex,
          networkName: wallet.networkName,
          token: wallet.token,
          recipient: wallet.recipient,
          data: wallet.data,
          localRpcUrl: wallet.localRpcUrl ?? null,
        }
      : null,
  };
}

function bankAccountView(requisites: Requisites | null): BankAccountView | null {
  if (requisites === null) return null;
  switch (requisites.scheme) {
    case 'sepa':
      return { ...requisites, ibanGrouped: groupedIban(requisites.iban) };
    case 'uk':
      return {
        scheme: 'uk',
        holder: requisites.holder,
        accountNumber: requisites.account_number,
        sortCode: requisites.sort_code,
      };
    case 'us_ach':
      return {
        scheme: 'us_ach',
        holder: requisites.holder,
        accountNumber: requisites.account_number,
        routingNumber: requisites.routing_number,
      };
    case 'swift':
      return {
        scheme: 'swift',
        holder: requisites.holder,
        accountNumber: requisites.account_number,
        bic: requisites.swift_bic,
        bankName: requisites.bank_name,
      };
  }
}

/**
 * The bank transfer block: the account's requisites, the open amount and the reference, and
 * for a euro request to an IBAN the GiroCode (EPC QR) that fills the transfer in a banking app.
 */
async function bankTransfer(
  rail: Rails['bank'],
  seller: string,
  currency: string,
  open: ReturnType<typeof openAmount>,
  locale: string,
): Promise<BankTransferView | null> {
  if (!rail) return null;
  const account = bankAccountView(rail.account.requisites as Requisites | null);
  const payload =
    account?.scheme === 'sepa' && currency === 'EUR'
      ? epcPayload({
          bic: account.bic,
          name: account.holder,
          iban: account.iban,
          amount: open,
          reference: rail.reference,
        })
      : null;
  return {
    seller,
    account,
    details: rail.account.details,
    amount: formatMoneyForPeople(open, currency, locale),
    amountPlain: formatAmountTrimmed(open),
    reference: rail.reference,
    // EPC069-12 asks for error correction level M.
    epcImage: payload
      ? await QRCode.toDataURL(payload, { errorCorrectionLevel: 'M', margin: 4, width: 240 })
      : null,
    epcPayload: payload,
  };
}

/** The wallet transfer for a crypto account, when its network is configured on this server. */
function walletFor(deps: PagesDeps, account: AccountView, open: ReturnType<typeof openAmount>) {
  if (!account.address || !account.network) return undefined;
  const network = deps.networks?.byName(account.network as NetworkName);
  return network ? walletPayment(network, account.address, open) : undefined;
}

/** What the pay page polls: its status and amounts, so it turns to Paid without a reload. */
export async function payStatus(deps: PagesDeps, token: string) {
  const request = await requestOr404(deps, token);
  const record = presentRequest(request, deps.publicUrl, deps.clock.now());
  const { locale } = await peopleFormatOf(deps.db, request.space_id);
  return {
    status: record.status,
    amount: record.amount,
    amount_received: record.amount_received,
    currency: record.currency,
    received_label: formatMoneyForPeople(readAmount(request.amount_received), request.currency, locale),
  };
}

/** The development card rail: settles the open amount, or refuses like a card network would. */
export async function payByCard(
  deps: PagesDeps,
  token: string,
  card: { number: string; exp: string; cvc: string },
) {
  if (deps.production) throw new AppError('not_found', 'No card rail is configured.');
  const request = await requestOr404(deps, token);
  const verdict = judgeTestCard(card, deps.clock.now());
  if (!verdict.ok && verdict.code === 'card_declined') throw new AppError('card_declined', verdict.detail);
  if (!verdict.ok) throw new AppError('invalid_request', verdict.detail, { field: 'number' });
  const outcome = await deps.db.transaction().execute((tx) =>
    settlePaymentRequest(tx, {
      spaceId: request.space_id,
      requestId: request.id,
      amount: openPrice(request),
      rail: 'card',
      reference: `card_${randomUUID()}`,
      payer: `card ending ${card.number.replace(/\D/g, '').slice(-4)}`,
      at: deps.clock.now(),
    }),
  );
  if (!outcome.ok)
    throw new AppError('request_not_payable', `This payment request is ${outcome.status}.`, {
      status: outcome.status,
    });
  return presentRequest(outcome.request, deps.publicUrl, deps.clock.now());
}

export async function creditPageModel(deps: PagesDeps, token: string): Promise<CreditPageModel | undefined> {
  if (!hasSecretShape(token, 'cr_')) return undefined;
  const page = await creditPage(deps.db, token);
  if (!page) return undefined;
  const paidIn = page.topUps.reduce((sum, topUp) => sum + readAmount(topUp.amount), 0n);
  const { profile, format } = await sellerFaceOf(deps.db, page.credit.space_id);
  const usd = (amount: AmountE8) => formatMoneyForPeople(amount, 'USD', format.locale);
  return {
    token,
    format,
    topUpChoices: (await canTopUp(deps.db, page.credit.space_id, page.credit.id)) ? TOP_UP_CHOICES : [],
    seller: profile.display_name,
    clientRef: page.credit.client_ref,
    balance: usd(page.balance),
    paidIn: usd(asAmount(paidIn)),
    calls: page.calls.map((call) => ({
      at: call.created_at.toISOString(),
      amount: usd(readAmount(call.amount)),
      memo: call.memo,
      resource: call.resource ?? '',
    })),
    topUps: page.topUps.map((topUp) => ({
      at: topUp.settled_at.toISOString(),
      amount: usd(readAmount(topUp.amount)),
      rail: topUp.rail,
    })),
  };
}

/** The balance page's Top up: the pay page of the client's top-up request, or undefined. */
export function topUpFromCreditPage(
  deps: PagesDeps,
  token: string,
  amount: (typeof TOP_UP_CHOICES)[number],
): Promise<{ path: string } | undefined> {
  if (!hasSecretShape(token, 'cr_')) return Promise.resolve(undefined);
  return topUpFromBalancePage(deps.db, deps, token, amount);
}

/** "Pay by card": a Stripe Checkout Session for what the request still needs, and its address. */
export async function payByCheckout(deps: PagesDeps, token: string): Promise<{ url: string }> {
  if (!deps.card) throw new AppError('not_found', 'No card rail is configured.');
  return openCheckout(deps.card, token);
}

/** The public invoice page's model, or undefined for an unknown token. */
export async function invoicePageModel(
  deps: PagesDeps,
  token: string,
  problem?: string,
): Promise<InvoicePageModel | undefined> {
  if (!hasSecretShape(token, 'inv_')) return undefined;
  const found = await invoiceByToken(deps.db, token);
  if (!found) return undefined;
  const status = found.row.status;
  const links = await documentLinks(deps.db, found.row.space_id, found.row);
  const format = await peopleFormatOf(deps.db, found.row.space_id);
  return {
    token,
    format,
    number: found.row.number,
    invoice: found.row,
    seller: found.row.seller_name,
    logoUrl: await logoUrlOf(deps.db, found.row.space_id),
    quoteNumber: links.quote?.number ?? null,
    status,
    open: formatMoneyForPeople(found.open, found.row.currency, format.locale),
    currency: found.row.currency,
    payable: (status === 'sent' || status === 'partial') && found.open > 0n,
    cardCheckout: deps.card !== undefined && cardTakes(found.row.currency, found.open),
    problem,
  };
}

/** The quote's public page model, or undefined for an unknown token or a quote not sent. */
export async function quotePageModel(
  deps: PagesDeps,
  token: string,
  refused?: { problem: string; name: string },
): Promise<QuotePageModel | undefined> {
  if (!hasSecretShape(token, 'inv_')) return undefined;
  const found = await quoteByToken(deps.db, token, deps.clock.now().toISOString().slice(0, 10));
  if (!found) return undefined;
  const { row } = found;
  const format = await peopleFormatOf(deps.db, row.space_id);
  const money = (value: string) => formatMoneyForPeople(readAmount(value), row.currency, format.locale);
  // Quantities as the invoice page and the PDF write them, in the book's locale.
  const quantity = (value: string) => formatDecimalTextForPeople(value, format.locale) ?? value;
  return {
    token,
    format,
    number: row.number,
    seller: row.seller_name,
    logoUrl: await logoUrlOf(deps.db, row.space_id),
    clientName: row.client_name,
    issuedOn: row.issued_on,
    validUntil: row.due_on,
    lines: row.line_items.map((line) => ({
      description: line.description,
      quantity: line.unit ? `${quantity(line.quantity)} ${line.unit}` : quantity(line.quantity),
      unitPrice: money(line.unit_price),
      amount: money(line.amount),
    })),
    subtotal: money(row.subtotal),
    tax: money(row.tax_total),
    total: money(row.total),
    notes: row.notes,
    status: found.status,
    decidedAt: row.quote_decided_at?.toISOString() ?? null,
    decidedBy: row.quote_decided_by,
    invoiceNumber: found.invoiceNumber,
    problem: refused?.problem,
    name: refused?.name,
  };
}

/** A name typed on the quote's page: trimmed, 1 to 200 characters, or undefined. */
export function typedName(body: unknown): string | undefined {
  const raw = typeof body === 'object' && body !== null && 'name' in body ? body.name : undefined;
  const name = typeof raw === 'string' ? raw.trim() : '';
  return name.length >= 1 && name.length <= 200 ? name : undefined;
}

/** The client's answer on the quote's page (see invoices' answerQuote). */
export function answerQuoteOnPage(
  deps: PagesDeps,
  token: string,
  decision: 'accept' | 'decline',
  name: string,
) {
  return answerQuote(deps, token, decision, name);
}

/**
 * "Pay" on the invoice page: the payment request for what is open, on the invoice's account,
 * reused while it can take money for that amount; its settlement pays the invoice.
 */
export async function payInvoice(
  deps: PagesDeps,
  token: string,
): Promise<{ ok: true; payUrl: string } | { ok: false; problem: string }> {
  const found = hasSecretShape(token, 'inv_') ? await invoiceByToken(deps.db, token) : undefined;
  if (!found) throw new AppError('not_found', 'No invoice at this address.');
  const { row, open } = found;
  if (!(row.status === 'sent' || row.status === 'partial') || open <= 0n)
    return { ok: false, problem: `This invoice is ${row.status}; it takes no payment.` };
  const now = deps.clock.now();
  const existing = await activeRequestForInvoice(deps.db, row.space_id, row.id, now);
  if (existing && readAmount(existing.amount) - readAmount(existing.amount_received) === open)
    return { ok: true, payUrl: `/pay/${existing.token}` };
  try {
    const minted = await deps.db.transaction().execute((tx) =>
      mintRequest(tx, deps, {
        spaceId: row.space_id,
        keyId: null,
        accountId: row.account_id,
        amount: open,
        currency: row.currency,
        expiresAt: null,
        memo: `Invoice ${row.number}`,
        resource: '',
        invoiceId: row.id,
      }),
    );
    return { ok: true, payUrl: `/pay/${minted.token}` };
  } catch (error) {
    if (error instanceof AppError) return { ok: false, problem: error.message };
    throw error;
  }
}

/** A book's logo by its public address (the SHA-256 of its bytes), or undefined. */
export function logoFile(deps: PagesDeps, digest: string) {
  return logoByDigest(deps.db, digest);
}
