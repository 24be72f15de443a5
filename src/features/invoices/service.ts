import { randomUUID } from 'node:crypto';
import { assert } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import {
  type AmountE8,
  asAmount,
  formatAmount,
  formatAmountTrimmed,
  parseAmountInput,
} from '../../core/money.ts';
import { randomSecret } from '../../platform/crypto.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import type { IntegrationCaller } from '../../platform/http/context.ts';
import type { Mailer, SentMail } from '../../platform/mail/mailer.ts';
import { enqueueEvent } from '../../platform/outbox/outbox.ts';
import { requireAccount } from '../accounts/index.ts';
import { contactExists, saveInvoiceContact } from '../contacts/index.ts';
import { increase, ledgerAccounts, postEntry, readAmount } from '../ledger/index.ts';
import { requireAdministrator, requireRole } from '../spaces/index.ts';
import { invoiceMail, invoicePdf, openAmountOf } from './document.ts';
import {
  addDays,
  afterPayment,
  afterSend,
  allows,
  computeTotals,
  creditRoom,
  formatRate,
  generatedNumber,
  type InvoiceStatus,
  initialStatus,
  type Move,
  type PaymentOutcome,
  REMIND_AFTER_DAYS,
  REMIND_BEFORE_DAYS,
  type ReminderStage,
  reminderStage,
  type Totals,
  visibleStatus,
} from './domain.ts';
import type { ClientBody, InvoiceCreateBody, PaymentBody, SellerBody, SendBody } from './schemas.ts';
import * as store from './store.ts';

export type InvoicesDeps = { db: Db; clock: Clock; publicUrl: string; mailer?: Mailer | undefined };

const today = (clock: Clock) => clock.now().toISOString().slice(0, 10);
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
    delivered_in_app: false,
    tax_label: '',
    line_step: '',
    contested_at: null,
    contested_reason: '',
    payer_marked_paid_at: null,
    payment_withdrawn_at: null,
    promised_on: null,
    reminders_paused_at: iso(row.reminders_paused_at),
    created_at: row.created_at.toISOString(),
    url: `${publicUrl}/i/${row.token}`,
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

async function presentWithPayments(
  db: Queryable,
  row: store.InvoiceRow,
  publicUrl: string,
  todayText: string,
) {
  return present(row, await store.listPayments(db, row.id), publicUrl, todayText);
}

function totalsOrRefuse(body: InvoiceCreateBody, currency: string): Totals {
  const outcome = computeTotals(body.line_items, currency, body.prices_include_tax ?? false);
  if (!outcome.ok) {
    const first = outcome.problems[0]!;
    throw new AppError('invalid_request', `Line ${first.index + 1}: ${first.detail}.`, {
      problems: outcome.problems.map((p) => ({
        loc: ['body', 'line_items', p.index, p.field],
        msg: p.detail,
      })),
    });
  }
  if (outcome.totals.total < 0n)
    throw new AppError('amount_not_accepted', 'An invoice total cannot be negative.', {
      field: 'line_items',
    });
  return outcome.totals;
}

function lineItemsOut(totals: Totals, body: InvoiceCreateBody) {
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

function breakdownOut(totals: Totals) {
  return totals.breakdown.map((group) => ({
    tax_kind: group.taxKind,
    tax_rate: formatRate(group.taxRate),
    net: formatAmount(group.net),
    tax: formatAmount(group.tax),
  }));
}

async function refuseTakenNumber(db: Queryable, spaceId: string, number: string) {
  const existing = await store.findLiveByNumber(db, spaceId, number);
  if (existing)
    throw new AppError('invoice_number_taken', `Invoice number ${number} is already used in this space.`, {
      number,
      existing_id: existing.id,
    });
}

/** A generated INV-nnnnnn that no live invoice uses (a seller may have typed one in by hand). */
async function nextFreeNumber(db: Queryable, spaceId: string): Promise<string> {
  for (let attempt = 0; attempt < 1000; attempt += 1) {
    const candidate = generatedNumber(await store.nextNumberValue(db, spaceId));
    if (!(await store.findLiveByNumber(db, spaceId, candidate))) return candidate;
  }
  throw new AppError('conflict', 'No free generated invoice number; send number explicitly.');
}

async function contactFor(tx: Queryable, clock: Clock, spaceId: string, body: InvoiceCreateBody) {
  const named = body.contact_id ?? null;
  if (body.save_contact) {
    return saveInvoiceContact(tx, clock, spaceId, named, {
      name: body.client_name,
      email: body.client_email ?? '',
      phone: body.client_phone ?? '',
      address: body.client_address ?? '',
      country: body.client_country ?? '',
      reg_number: body.client_reg_number ?? '',
      tax_id: body.client_tax_id ?? '',
    });
  }
  if (named !== null && !(await contactExists(tx, spaceId, named)))
    throw new AppError('invalid_request', 'No contact with this id in this space.', { field: 'contact_id' });
  return named;
}

function sellerColumns(seller: SellerBody | null | undefined) {
  return {
    seller_name: seller?.name ?? '',
    seller_email: seller?.email ?? '',
    seller_phone: seller?.phone ?? '',
    seller_address: seller?.address ?? '',
    seller_country: seller?.country ?? '',
    seller_reg_number: seller?.reg_number ?? '',
    seller_tax_id: seller?.tax_id ?? '',
    seller_website: seller?.website ?? '',
  };
}

function clientColumns(client: ClientBody) {
  return {
    client_name: client.name ?? '',
    client_email: client.email ?? '',
    client_phone: client.phone ?? '',
    client_address: client.address ?? '',
    client_country: client.country ?? '',
    client_reg_number: client.reg_number ?? '',
    client_tax_id: client.tax_id ?? '',
  };
}

/** POST /integration/invoices: mirrors an invoice as a draft, with its totals computed here. */
export async function createInvoice(
  tx: Queryable,
  deps: InvoicesDeps,
  caller: IntegrationCaller,
  body: InvoiceCreateBody,
) {
  const spaceId = caller.spaceId;
  const account = await requireAccount(tx, spaceId, body.account_id);
  const currency = (body.currency ?? account.currency).toUpperCase();
  const totals = totalsOrRefuse(body, currency);
  if (body.corrects_invoice_id != null) {
    if (body.kind !== 'credit_note')
      throw new AppError('invalid_request', 'Only a credit note corrects an invoice.', {
        field: 'corrects_invoice_id',
      });
    await applyCredit(tx, spaceId, body.corrects_invoice_id, currency, totals.total);
  }
  if (body.number != null) await refuseTakenNumber(tx, spaceId, body.number);
  const number = body.number ?? (await nextFreeNumber(tx, spaceId));
  const now = deps.clock.now();
  const row = await store.insertInvoice(tx, {
    id: randomUUID(),
    space_id: spaceId,
    key_id: caller.keyId,
    account_id: account.id,
    contact_id: await contactFor(tx, deps.clock, spaceId, body),
    project_id: body.project_id ?? null,
    corrects_invoice_id: body.corrects_invoice_id ?? null,
    kind: body.kind ?? 'invoice',
    status: initialStatus(body.kind ?? 'invoice'),
    number,
    token: randomSecret('inv_'),
    currency,
    issued_on: body.issued_on ?? today(deps.clock),
    due_on: body.due_on,
    client_name: body.client_name,
    client_email: body.client_email ?? '',
    client_address: body.client_address ?? '',
    client_country: body.client_country ?? '',
    client_country_code: (body.client_country_code ?? '').toUpperCase(),
    client_phone: body.client_phone ?? '',
    client_reg_number: body.client_reg_number ?? '',
    client_tax_id: body.client_tax_id ?? '',
    ...sellerColumns(body.seller as SellerBody | null | undefined),
    notes: body.notes ?? '',
    purchase_order: body.purchase_order ?? '',
    tax_authority_number: body.tax_authority_number ?? '',
    tax_exempt_reason: body.tax_exempt_reason ?? null,
    tax_zero_reason: body.tax_zero_reason ?? null,
    prices_include_tax: body.prices_include_tax ?? false,
    line_items: JSON.stringify(lineItemsOut(totals, body)),
    tax_breakdown: JSON.stringify(breakdownOut(totals)),
    subtotal: formatAmount(totals.subtotal),
    tax_total: formatAmount(totals.taxTotal),
    total: formatAmount(totals.total),
    paid_amount: '0',
    credited_amount: '0',
    auto_remind: true,
    last_paid_on: null,
    sent_at: null,
    paid_event_at: null,
    voided_at: null,
    void_reason: '',
    reminders_paused_at: null,
    created_at: now,
    updated_at: now,
  });
  return present(row, [], deps.publicUrl, today(deps.clock));
}

async function ownInvoice(db: Queryable, spaceId: string, id: string, lock: boolean) {
  const row = lock ? await store.lockInvoice(db, spaceId, id) : await store.findInvoice(db, spaceId, id);
  if (!row) throw new AppError('not_found', 'No invoice with this id in this space.');
  return row;
}

function refuseMove(move: Move, row: store.InvoiceRow) {
  if (allows(move, row.status as InvoiceStatus)) return;
  throw new AppError('invoice_state', `This invoice is ${row.status}; it cannot be ${MOVE_WORDS[move]}.`, {
    status: row.status,
    move,
  });
}

const MOVE_WORDS: Record<Move, string> = {
  send: 'sent',
  pay: 'paid (payments are recorded against sent or partial invoices only)',
  void: 'voided again',
  remind: 'reminded (reminders go to sent or partial invoices only)',
  edit: 'edited',
  accept: 'accepted (only a sent quote before its due date can be)',
  decline: 'declined (only a sent quote before its due date can be)',
};

export async function getInvoice(deps: InvoicesDeps, spaceId: string, id: string) {
  const row = await ownInvoice(deps.db, spaceId, id, false);
  return presentWithPayments(deps.db, row, deps.publicUrl, today(deps.clock));
}

/** POST .../seller and .../client: replace one side's requisites (all fields; absent = empty). */
export async function setParty(
  tx: Queryable,
  deps: InvoicesDeps,
  spaceId: string,
  id: string,
  party: { seller: SellerBody } | { client: ClientBody },
) {
  const row = await ownInvoice(tx, spaceId, id, true);
  refuseMove('edit', row);
  if ('client' in party && (party.client.name ?? '') === '')
    throw new AppError('invalid_request', 'An invoice needs a client name.', { field: 'name' });
  const changes = 'seller' in party ? sellerColumns(party.seller) : clientColumns(party.client);
  const updated = await store.updateInvoice(tx, spaceId, id, { ...changes, updated_at: deps.clock.now() });
  return presentWithPayments(tx, updated, deps.publicUrl, today(deps.clock));
}

/** POST .../send: "none" marks sent; email and chat are refused until their transports exist. */
export async function sendInvoice(
  tx: Queryable,
  deps: InvoicesDeps,
  spaceId: string,
  id: string,
  body: SendBody,
) {
  const row = await ownInvoice(tx, spaceId, id, true);
  refuseMove('send', row);
  const via = body.via ?? 'email';
  let sent: SentMail | undefined;
  if (via === 'email')
    sent = await mailInvoice(
      deps,
      row,
      body.to || row.client_email,
      body.cc ?? [],
      body.message ?? '',
      'send',
    );
  if (via === 'chat')
    throw new AppError('delivery_unavailable', 'Chat delivery is not available yet; send with via "none".', {
      via,
      reason: 'chat_not_available',
    });
  const now = deps.clock.now();
  await store.insertDelivery(tx, {
    id: randomUUID(),
    space_id: spaceId,
    invoice_id: id,
    purpose: 'send',
    via: [via],
    recipient: body.to || row.client_email,
    cc: body.cc ?? [],
    message: body.message ?? '',
    created_at: now,
    mail_file: sent?.file ?? null,
  });
  const status = afterSend(row.status as InvoiceStatus);
  const updated = await store.updateInvoice(tx, spaceId, id, {
    status,
    sent_at: row.sent_at ?? now,
    updated_at: now,
  });
  return presentWithPayments(tx, updated, deps.publicUrl, today(deps.clock));
}

function parseAmount(value: number | string): AmountE8 {
  const parsed = parseAmountInput(value);
  assert(parsed.ok, 'The schema lets only valid amounts through.');
  return parsed.value;
}

async function bookPayment(
  tx: Queryable,
  row: store.InvoiceRow,
  payment: { id: string; accountId: string; amount: AmountE8; occurredOn: string; at: Date },
) {
  // Cash basis: a mirrored invoice's system of record is elsewhere, so the book records income
  // when money lands (the account's asset against income), not a receivable at issue.
  const where = { spaceId: row.space_id, currency: row.currency, at: payment.at };
  const asset = await ledgerAccounts.asset(tx, { ...where, accountId: payment.accountId });
  const income = await ledgerAccounts.income(tx, { ...where, resourceId: null });
  const posted = await postEntry(
    tx,
    {
      spaceId: row.space_id,
      origin: 'manual',
      kind: 'income',
      occurredOn: payment.occurredOn,
      causeType: 'invoice_payment',
      causeId: payment.id,
      counterparty: row.client_name,
      memo: `Invoice ${row.number}`,
      postings: [increase(asset, payment.amount), increase(income, payment.amount)],
    },
    payment.at,
  );
  assert(posted.ok, 'A payment only adds to balances, so no guard can refuse it.');
  return posted.entryId;
}

/** invoice.paid on both channels; the caller holds the invoice's row lock and sets paid_event_at. */
async function emitPaid(tx: Queryable, row: store.InvoiceRow, paid: AmountE8, via: string, at: Date) {
  if (row.key_id !== null) {
    await enqueueEvent(tx, {
      channel: 'key',
      spaceId: row.space_id,
      keyId: row.key_id,
      event: 'invoice.paid',
      at,
      data: {
        invoice_id: row.id,
        number: row.number,
        currency: row.currency,
        total: formatAmountTrimmed(readAmount(row.total)),
        total_paid: formatAmountTrimmed(paid),
        via,
      },
    });
  }
  await enqueueEvent(tx, {
    channel: 'book',
    spaceId: row.space_id,
    event: 'invoice.paid',
    at,
    fields: { invoice_id: row.id, number: row.number, amount: formatAmount(paid), currency: row.currency },
  });
}

async function emitMoneyIn(
  tx: Queryable,
  row: store.InvoiceRow,
  entryId: string,
  accountId: string,
  amount: AmountE8,
  occurredOn: string,
  at: Date,
) {
  await enqueueEvent(tx, {
    channel: 'book',
    spaceId: row.space_id,
    event: 'money.in',
    at,
    fields: {
      transaction_id: entryId,
      account_id: accountId,
      direction: 'in',
      amount: formatAmount(amount),
      currency: row.currency,
      kind: 'income',
      origin: 'manual',
      occurred_on: occurredOn,
    },
  });
}

type InvoicePaymentDraft = {
  /** The payment row's id, when a ledger entry already names it as its cause. */
  id?: string;
  accountId: string;
  amount: AmountE8;
  via: 'manual' | 'settlement' | 'card' | 'write_off';
  note: string;
  occurredOn: string;
  txId: string | null;
  entryId: string | null;
  at: Date;
  /** The road invoice.paid names when this row closes the invoice, if not its own `via`. */
  announceVia?: 'settlement' | 'card';
};

/**
 * The one road every payment of an invoice takes, on its locked row: the payment row, the new
 * status and paid amount, and invoice.paid written once, by the payment that closes it. A
 * write-off is not money paid, so it does not move `last_paid_on`.
 */
async function applyPayment(
  tx: Queryable,
  row: store.InvoiceRow,
  outcome: Extract<PaymentOutcome, { ok: true }>,
  payment: InvoicePaymentDraft,
) {
  await store.insertPayment(tx, {
    id: payment.id ?? randomUUID(),
    space_id: row.space_id,
    invoice_id: row.id,
    account_id: payment.accountId,
    amount: formatAmount(payment.amount),
    currency: row.currency,
    via: payment.via,
    note: payment.note,
    occurred_on: payment.occurredOn,
    tx_id: payment.txId,
    entry_id: payment.entryId,
    created_at: payment.at,
  });
  const announce = outcome.closes && row.paid_event_at === null;
  const moved =
    payment.via !== 'write_off' && (row.last_paid_on === null || row.last_paid_on < payment.occurredOn);
  const updated = await store.updateInvoice(tx, row.space_id, row.id, {
    status: outcome.status,
    paid_amount: formatAmount(outcome.paid),
    ...(moved ? { last_paid_on: payment.occurredOn } : {}),
    ...(announce ? { paid_event_at: payment.at } : {}),
    updated_at: payment.at,
  });
  if (announce) await emitPaid(tx, updated, outcome.paid, payment.announceVia ?? payment.via, payment.at);
  return updated;
}

/** POST .../payments: a hand-recorded payment against a sent or partial invoice. */
export async function recordPayment(
  tx: Queryable,
  deps: InvoicesDeps,
  spaceId: string,
  id: string,
  body: PaymentBody,
) {
  // The row lock makes concurrent payments on one invoice run one after another, so only the
  // one that reaches the total sees an open invoice close, and invoice.paid is written once.
  const row = await ownInvoice(tx, spaceId, id, true);
  refuseMove('pay', row);
  const amount = parseAmount(body.amount);
  const outcome = afterPayment(
    readAmount(row.total),
    readAmount(row.credited_amount),
    readAmount(row.paid_amount),
    amount,
  );
  if (!outcome.ok)
    throw new AppError(
      'amount_not_accepted',
      'The payment is larger than the amount still open on the invoice.',
      {
        field: 'amount',
        reason: 'overpayment',
        open: formatAmount(outcome.open),
      },
    );
  const account = await requireAccount(tx, spaceId, body.account_id ?? row.account_id);
  if (account.currency.toUpperCase() !== row.currency)
    throw new AppError(
      'currency_mismatch',
      `The account holds ${account.currency}; the invoice is in ${row.currency}.`,
      {
        field: 'account_id',
      },
    );
  const at = deps.clock.now();
  const payment = {
    id: randomUUID(),
    accountId: account.id,
    amount,
    occurredOn: body.occurred_on ?? today(deps.clock),
    at,
  };
  const entryId = await bookPayment(tx, row, payment);
  await emitMoneyIn(tx, row, entryId, account.id, amount, payment.occurredOn, at);
  const updated = await applyPayment(tx, row, outcome, {
    id: payment.id,
    accountId: account.id,
    amount,
    via: 'manual',
    note: body.note ?? '',
    occurredOn: payment.occurredOn,
    txId: body.tx_id ?? null,
    entryId,
    at,
  });
  return presentWithPayments(tx, updated, deps.publicUrl, today(deps.clock));
}

/** POST .../void: from any state but void; recorded payments stay booked and are listed. */
export async function voidInvoice(
  tx: Queryable,
  deps: InvoicesDeps,
  spaceId: string,
  id: string,
  reason: string,
) {
  const row = await ownInvoice(tx, spaceId, id, true);
  // Voiding is safe to retry: a void invoice answers as it is.
  if (row.status === 'void') return presentWithPayments(tx, row, deps.publicUrl, today(deps.clock));
  refuseMove('void', row);
  // A voided credit note gives its amount back to the invoice it corrected.
  if (row.kind === 'credit_note' && row.corrects_invoice_id !== null)
    await applyCredit(tx, spaceId, row.corrects_invoice_id, row.currency, asAmount(-readAmount(row.total)));
  const now = deps.clock.now();
  const updated = await store.updateInvoice(tx, spaceId, id, {
    status: 'void',
    voided_at: now,
    void_reason: reason,
    updated_at: now,
  });
  return presentWithPayments(tx, updated, deps.publicUrl, today(deps.clock));
}

/**
 * Mails the invoice (HTML, text, the PDF attached, the link to its public page) inside the
 * caller's transaction, so a refused or failed delivery changes nothing.
 */
async function mailInvoice(
  deps: InvoicesDeps,
  row: store.InvoiceRow,
  to: string,
  cc: string[],
  message: string,
  purpose: 'send' | 'remind',
) {
  if (!deps.mailer?.available)
    throw new AppError(
      'delivery_unavailable',
      'Mail is not configured on this server (SMTP_URL); send with via "none".',
      {
        via: 'email',
        reason: 'mail_not_configured',
      },
    );
  if (to === '')
    throw new AppError('invalid_request', 'The invoice has no client email; give one in "to".', {
      field: 'to',
    });
  const mail = invoiceMail(row, `${deps.publicUrl}/i/${row.token}`, message, purpose);
  try {
    return await deps.mailer.send({
      to,
      cc,
      ...mail,
      fromName: row.seller_name || undefined,
      attachments: [
        {
          filename: `invoice-${row.number}.pdf`,
          content: await invoicePdf(row),
          contentType: 'application/pdf',
        },
      ],
    });
  } catch (error) {
    throw new AppError(
      'delivery_failed',
      `The mail server refused the message: ${(error as Error).message}`.slice(0, 300),
      {
        via: 'email',
      },
    );
  }
}

/** POST .../remind: recorded against a sent or partial invoice, and mailed when mail is configured. */
export async function remindInvoice(
  tx: Queryable,
  deps: InvoicesDeps,
  spaceId: string,
  id: string,
  message: string,
) {
  const row = await ownInvoice(tx, spaceId, id, true);
  refuseMove('remind', row);
  const at = deps.clock.now();
  const via: string[] = [];
  let sent: SentMail | undefined;
  if (deps.mailer?.available && row.client_email !== '') {
    sent = await mailInvoice(deps, row, row.client_email, [], message, 'remind');
    via.push('email');
  }
  await store.insertDelivery(tx, {
    id: randomUUID(),
    space_id: spaceId,
    invoice_id: id,
    purpose: 'remind',
    via,
    recipient: row.client_email,
    cc: [],
    message,
    created_at: at,
    mail_file: sent?.file ?? null,
  });
  return { invoice_id: id, reminded: true, via, at: at.toISOString() };
}

/**
 * A credit note's amount (negative when it is voided) moves its invoice's credited_amount.
 * The credit never moves money or the invoice's state; it lowers what a payment must reach.
 */
async function applyCredit(
  tx: Queryable,
  spaceId: string,
  invoiceId: string,
  currency: string,
  amount: AmountE8,
) {
  const target = await store.lockInvoice(tx, spaceId, invoiceId);
  if (target?.kind !== 'invoice')
    throw new AppError('invalid_request', 'No invoice with this id in this space.', {
      field: 'corrects_invoice_id',
    });
  const credited = readAmount(target.credited_amount);
  if (amount > 0n) {
    if (target.status === 'void') refuseMove('pay', target);
    if (target.currency !== currency)
      throw new AppError('currency_mismatch', `The invoice is in ${target.currency}.`, { field: 'currency' });
    const room = creditRoom(readAmount(target.total), credited, readAmount(target.paid_amount));
    if (amount > room)
      throw new AppError('amount_not_accepted', 'The credit note is larger than the amount still open.', {
        field: 'line_items',
        reason: 'credit_exceeds_open',
        open: formatAmount(room),
      });
  }
  await store.updateInvoice(tx, spaceId, invoiceId, {
    credited_amount: formatAmount(asAmount(credited + amount)),
  });
}

/** POST .../accept and .../decline: a sent quote before its due date; past it, it reads expired. */
export async function decideQuote(
  tx: Queryable,
  deps: InvoicesDeps,
  spaceId: string,
  id: string,
  decision: 'accept' | 'decline',
) {
  const row = await ownInvoice(tx, spaceId, id, true);
  const status = visibleStatus(row.status as InvoiceStatus, row.due_on, today(deps.clock));
  refuseMove(decision, { ...row, status });
  const invoice = decision === 'accept' ? await invoiceFromQuote(tx, deps, row) : null;
  const updated = await store.updateInvoice(tx, spaceId, id, {
    status: decision === 'accept' ? 'quote_accepted' : 'quote_declined',
    ...(invoice ? { invoice_id: invoice.id } : {}),
    updated_at: deps.clock.now(),
  });
  return presentWithPayments(tx, updated, deps.publicUrl, today(deps.clock));
}

/** Days an invoice made from a quote gives the client to pay. */
const QUOTE_INVOICE_TERM_DAYS = 14;

/**
 * An accepted quote becomes a draft invoice: the same client, seller, account, lines and totals,
 * a generated number, issued today and due in 14 days. The seller sends it when ready.
 */
async function invoiceFromQuote(tx: Queryable, deps: InvoicesDeps, quote: store.InvoiceRow) {
  const now = deps.clock.now();
  const due = addDays(today(deps.clock), QUOTE_INVOICE_TERM_DAYS);
  const { id: _quoteId, seq: _seq, ...fields } = quote as store.InvoiceRow & { seq?: unknown };
  return store.insertInvoice(tx, {
    ...fields,
    id: randomUUID(),
    kind: 'invoice',
    status: 'draft',
    number: await nextFreeNumber(tx, quote.space_id),
    token: randomSecret('inv_'),
    issued_on: today(deps.clock),
    due_on: due,
    line_items: JSON.stringify(quote.line_items),
    tax_breakdown: JSON.stringify(quote.tax_breakdown),
    paid_amount: '0',
    credited_amount: '0',
    shortfall_amount: '0',
    invoice_id: null,
    last_paid_on: null,
    sent_at: null,
    paid_event_at: null,
    voided_at: null,
    void_reason: '',
    reminders_paused_at: null,
    created_at: now,
    updated_at: now,
  });
}

/** An invoice by its public token (its page at /i/{token}), with its payments. */
export async function invoiceByToken(db: Queryable, token: string) {
  const row = await store.findByToken(db, token);
  if (row?.kind !== 'invoice') return undefined;
  return { row, open: asAmount(openAmountOf(row)) };
}

/**
 * A payment request minted for the invoice settled (card, chain, x402, bank): the payment is
 * recorded against the invoice, which moves to partial or paid, with invoice.paid once. The
 * settlement has booked the money already (its entry is referenced, not booked again). An
 * invoice that no longer takes payments (void, or paid by another road meanwhile) is left alone:
 * the money stays booked as the request's income. More than is open closes the invoice; the
 * excess is the request's, not the invoice's. Answers what is still open on the invoice
 * afterwards (null when it takes no payments).
 */
export async function applyInvoiceSettlement(
  tx: Queryable,
  input: {
    spaceId: string;
    invoiceId: string;
    accountId: string;
    amount: AmountE8;
    via: 'card' | 'settlement';
    entryId: string;
    reference: string;
    at: Date;
  },
): Promise<AmountE8 | null> {
  const row = await store.lockInvoice(tx, input.spaceId, input.invoiceId);
  if (!row || !allows('pay', row.status as InvoiceStatus)) return null;
  const open = asAmount(openAmountOf(row));
  const applied = input.amount < open ? input.amount : open;
  if (applied <= 0n) return open;
  const outcome = afterPayment(
    readAmount(row.total),
    readAmount(row.credited_amount),
    readAmount(row.paid_amount),
    applied,
  );
  assert(outcome.ok, 'The applied amount is at most what is open.');
  await applyPayment(tx, row, outcome, {
    accountId: input.accountId,
    amount: applied,
    via: input.via,
    note: input.reference.slice(0, 500),
    occurredOn: input.at.toISOString().slice(0, 10),
    txId: null,
    entryId: input.entryId,
    at: input.at,
  });
  return asAmount(open - applied);
}

/**
 * The rest of an invoice, at most the tag (under one cent) its request was lowered by, given as
 * a settlement discount once that request was paid in full (issue 22): a `write_off` payment row
 * that names the discount's ledger entry, so the invoice closes and invoice.paid fires once,
 * naming the road the money came by.
 */
export async function applyInvoiceDiscount(
  tx: Queryable,
  input: {
    spaceId: string;
    invoiceId: string;
    accountId: string;
    amount: AmountE8;
    via: 'card' | 'settlement';
    entryId: string;
    note: string;
    at: Date;
  },
) {
  const row = await store.lockInvoice(tx, input.spaceId, input.invoiceId);
  assert(row && allows('pay', row.status as InvoiceStatus), 'The invoice took the settlement just now.');
  const outcome = afterPayment(
    readAmount(row.total),
    readAmount(row.credited_amount),
    readAmount(row.paid_amount),
    input.amount,
  );
  assert(outcome.ok && outcome.closes, 'The discount is exactly what is open.');
  await applyPayment(tx, row, outcome, {
    accountId: input.accountId,
    amount: input.amount,
    via: 'write_off',
    note: input.note.slice(0, 500),
    occurredOn: input.at.toISOString().slice(0, 10),
    txId: null,
    entryId: input.entryId,
    at: input.at,
    announceVia: input.via,
  });
}

/** A reorganisation took back money that paid the invoice: it stays as it is, the gap is recorded. */
export async function recordInvoiceShortfall(
  tx: Queryable,
  spaceId: string,
  invoiceId: string,
  amount: AmountE8,
) {
  const row = await store.lockInvoice(tx, spaceId, invoiceId);
  if (!row) return;
  await store.updateInvoice(tx, spaceId, invoiceId, {
    shortfall_amount: formatAmount(asAmount(readAmount(row.shortfall_amount) + amount)),
  });
}

const STAGE_MESSAGES: Record<ReminderStage, string> = {
  before_due: 'A friendly reminder: this invoice is due in a few days.',
  on_due: 'This invoice is due today.',
  after_due: 'This invoice is now overdue; please pay it at your earliest convenience.',
};

/**
 * The automatic reminders job: open invoices with auto_remind on, not paused, with a client
 * email, get one mail per stage (three days before due, on due, a week after). Each stage is
 * claimed in the same transaction that mails it, so a failed mail is retried at the next run
 * and no two processes send the same one. Answers how many went out.
 */
export async function sendAutomaticReminders(deps: InvoicesDeps, limit = 50): Promise<number> {
  if (!deps.mailer?.available) return 0;
  const todayText = today(deps.clock);
  const shift = (days: number) => addDays(todayText, days);
  const bounds = {
    afterBefore: shift(-REMIND_AFTER_DAYS),
    onBefore: todayText,
    firstBefore: shift(REMIND_BEFORE_DAYS),
  };
  let sent = 0;
  for (const due of await store.dueForReminder(deps.db, bounds, limit)) {
    try {
      const mailed = await deps.db.transaction().execute(async (tx) => {
        const row = await store.lockInvoiceIfFree(tx, due.space_id, due.id);
        if (
          !row ||
          !row.auto_remind ||
          row.reminders_paused_at !== null ||
          !allows('remind', row.status as InvoiceStatus)
        )
          return false;
        const stage = reminderStage(row.due_on, todayText);
        if (stage === null) return false;
        const claimed = await store.claimAutoStage(tx, {
          id: randomUUID(),
          space_id: row.space_id,
          invoice_id: row.id,
          purpose: 'remind',
          via: ['email'],
          recipient: row.client_email,
          cc: [],
          message: STAGE_MESSAGES[stage],
          created_at: deps.clock.now(),
          auto_stage: stage,
        });
        if (!claimed) return false;
        const sent = await mailInvoice(deps, row, row.client_email, [], STAGE_MESSAGES[stage], 'remind');
        if (sent.file) await store.setMailFile(tx, row.id, stage, sent.file);
        return claimed;
      });
      if (mailed) sent += 1;
    } catch {
      // The mail failed: nothing was recorded, the next run tries again.
    }
  }
  return sent;
}

/**
 * Writes off what is still open on a sent or partial invoice (owners and admins, from the app):
 * a payment row `via: write_off` with no ledger entry (the book records income only when money
 * lands, so nothing was booked to undo), the invoice closes, and invoice.paid fires once.
 */
export async function writeOffInvoice(
  deps: InvoicesDeps,
  userId: string,
  spaceId: string,
  id: string,
  reason: string,
) {
  await requireAdministrator(deps.db, spaceId, userId);
  return deps.db.transaction().execute(async (tx) => {
    const row = await ownInvoice(tx, spaceId, id, true);
    refuseMove('pay', row);
    const open = asAmount(openAmountOf(row));
    const outcome = afterPayment(
      readAmount(row.total),
      readAmount(row.credited_amount),
      readAmount(row.paid_amount),
      open,
    );
    assert(outcome.ok && outcome.closes, 'Writing off what is open always closes the invoice.');
    const at = deps.clock.now();
    const occurredOn = today(deps.clock);
    const updated = await applyPayment(tx, row, outcome, {
      accountId: row.account_id,
      amount: open,
      via: 'write_off',
      note: reason,
      occurredOn,
      txId: null,
      entryId: null,
      at,
    });
    return presentWithPayments(tx, updated, deps.publicUrl, occurredOn);
  });
}

/** What was delivered for the space's invoices (sends and reminders), newest first; .eml files in development. */
export async function listDeliveries(
  deps: InvoicesDeps,
  userId: string,
  spaceId: string,
  invoiceId?: string,
) {
  await requireRole(deps.db, spaceId, userId);
  const rows = await store.spaceDeliveries(deps.db, spaceId, invoiceId, 200);
  return {
    items: rows.map((row) => ({
      id: row.id,
      invoice_id: row.invoice_id,
      purpose: row.purpose,
      via: row.via,
      recipient: row.recipient,
      cc: row.cc,
      message: row.message,
      auto_stage: row.auto_stage,
      mail_file: row.mail_file,
      created_at: row.created_at.toISOString(),
    })),
  };
}
