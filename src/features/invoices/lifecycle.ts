import { randomUUID } from 'node:crypto';
import { defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { utcDateOf } from '../../core/day.ts';
import { AppError } from '../../core/errors.ts';
import { type AmountE8, asAmount, formatAmount } from '../../core/money.ts';
import { randomSecret } from '../../platform/crypto.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import type { StoredLineItem } from '../../platform/db/schema.ts';
import type { Mailer } from '../../platform/mail/mailer.ts';
import { enqueueMail } from '../../platform/mail/outbox.ts';
import { requireAccount } from '../accounts/index.ts';
import { contactExists, saveInvoiceContact } from '../contacts/index.ts';
import { readAmount } from '../ledger/index.ts';
import { peopleFormatOf, requireRole, takeDocumentNumber } from '../spaces/index.ts';
import type { InvoiceChatPort } from './chat-port.ts';
import { queueChatPost } from './chat-posts.ts';
import { creditNoteMail, invoiceMail, quoteMail } from './document-view.tsx';
import {
  afterSend,
  allows,
  computeTotals,
  contactFromClient,
  creditRoom,
  type DocKind,
  freshInvoiceState,
  initialStatus,
  type LineInput,
  type Move,
  openAmountOf,
  TAX_KINDS,
  type Totals,
} from './domain.ts';
import { documentFileBase, renderInvoicePdf } from './pdf.ts';
import { invoiceSheet } from './pdf-sheet.ts';
import { breakdownOut, lineItemsOut, present, presentWithPayments, publicPageUrl } from './presentation.ts';
import type { ClientBody, InvoiceCreateBody, InvoicePatchBody, SellerBody, SendBody } from './schemas.ts';
import { reSnapshotSeller, snapshotSeller, withSellerShown } from './seller.ts';
import * as store from './store.ts';

// An invoice's life: created (mirrored or from the app), read, its parties corrected, sent,
// reminded by hand, voided; credit notes against it, and what was mailed for it.

export type InvoicesDeps = {
  db: Db;
  clock: Clock;
  publicUrl: string;
  mailer?: Mailer | undefined;
  /** Delivery to the client's chat group (features/chat), when the bot is enabled. */
  chat?: InvoiceChatPort | undefined;
};

export const today = (clock: Clock) => utcDateOf(clock.now());

function totalsOrRefuse(
  body: { line_items: LineInput[]; prices_include_tax?: boolean | null | undefined },
  currency: string,
): Totals {
  const outcome = computeTotals(body.line_items, currency, body.prices_include_tax ?? false);
  if (!outcome.ok) {
    const first = defined(outcome.problems[0], 'the first problem of a refused invoice');
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

async function refuseTakenNumber(db: Queryable, spaceId: string, number: string) {
  const existing = await store.findLiveByNumber(db, spaceId, number);
  if (existing)
    throw new AppError('invoice_number_taken', `Invoice number ${number} is already used in this space.`, {
      number,
      existing_id: existing.id,
    });
}

/**
 * The kind's next generated number (INV-, QUO-, CN- and six digits, by default) that no live
 * document uses (a seller may have typed one in by hand), taken in the caller's transaction.
 */
export async function nextFreeNumber(db: Queryable, spaceId: string, kind: DocKind): Promise<string> {
  for (let attempt = 0; attempt < 1000; attempt += 1) {
    const candidate = await takeDocumentNumber(db, spaceId, kind);
    if (!(await store.findLiveByNumber(db, spaceId, candidate))) return candidate;
  }
  throw new AppError('conflict', 'No free generated invoice number; send number explicitly.');
}

async function contactFor(tx: Queryable, clock: Clock, spaceId: string, body: InvoiceCreateBody) {
  const named = body.contact_id ?? null;
  if (body.save_contact) {
    return saveInvoiceContact(tx, clock, spaceId, named, contactFromClient(body));
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

/** Who writes a document: its book, and the integration key it came through (null from the app). */
export type DocumentAuthor = { spaceId: string; keyId: string | null };

/** POST /integration/invoices: mirrors an invoice as a draft, with its totals computed here. */
export async function createInvoice(
  tx: Queryable,
  deps: InvoicesDeps,
  author: DocumentAuthor,
  body: InvoiceCreateBody,
) {
  const spaceId = author.spaceId;
  const kind = body.kind ?? 'invoice';
  const account = await requireAccount(tx, spaceId, body.account_id);
  const currency = (body.currency ?? account.currency).toUpperCase();
  const totals = totalsOrRefuse(body, currency);
  const issuedOn = body.issued_on ?? today(deps.clock);
  const dueOn = body.due_on ?? (kind === 'credit_note' ? issuedOn : undefined);
  if (dueOn === undefined)
    throw new AppError('invalid_request', 'An invoice or a quote needs a due date (due_on).', {
      field: 'due_on',
    });
  let corrected: store.InvoiceRow | undefined;
  if (body.corrects_invoice_id != null) {
    if (kind !== 'credit_note')
      throw new AppError('invalid_request', 'Only a credit note corrects an invoice.', {
        field: 'corrects_invoice_id',
      });
    corrected = await applyCredit(tx, spaceId, body.corrects_invoice_id, currency, totals.total);
  }
  if (body.number != null) await refuseTakenNumber(tx, spaceId, body.number);
  const number = body.number ?? (await nextFreeNumber(tx, spaceId, kind));
  const now = deps.clock.now();
  // A credit note keeps the client of the invoice it corrects for every field it leaves blank.
  const client = corrected ? clientOfCorrected(body, corrected) : body;
  const inserted = await store.insertInvoice(tx, {
    id: randomUUID(),
    space_id: spaceId,
    key_id: author.keyId,
    account_id: account.id,
    contact_id: (await contactFor(tx, deps.clock, spaceId, body)) ?? corrected?.contact_id ?? null,
    project_id: body.project_id ?? null,
    corrects_invoice_id: body.corrects_invoice_id ?? null,
    kind,
    status: initialStatus(kind),
    number,
    token: randomSecret('inv_'),
    currency,
    issued_on: issuedOn,
    due_on: dueOn,
    client_name: client.client_name,
    client_email: client.client_email ?? '',
    client_address: client.client_address ?? '',
    client_country: client.client_country ?? '',
    client_country_code: (client.client_country_code ?? '').toUpperCase(),
    client_phone: client.client_phone ?? '',
    client_reg_number: client.client_reg_number ?? '',
    client_tax_id: client.client_tax_id ?? '',
    ...sellerColumns(body.seller as SellerBody | null | undefined),
    notes: body.notes ?? '',
    purchase_order: body.purchase_order ?? '',
    tax_authority_number: body.tax_authority_number ?? '',
    tax_exempt_reason: body.tax_exempt_reason ?? null,
    tax_zero_reason: body.tax_zero_reason ?? null,
    delivered_on: body.delivered_on ?? null,
    prices_include_tax: body.prices_include_tax ?? false,
    line_items: JSON.stringify(lineItemsOut(totals, body)),
    tax_breakdown: JSON.stringify(breakdownOut(totals)),
    subtotal: formatAmount(totals.subtotal),
    tax_total: formatAmount(totals.taxTotal),
    total: formatAmount(totals.total),
    auto_remind: true,
    ...freshInvoiceState(now),
  });
  // A credit note is issued when it is made, so it keeps the seller of that moment.
  const row = inserted.status === 'issued' ? await snapshotSeller(tx, inserted, now) : inserted;
  return present(row, [], deps.publicUrl, today(deps.clock));
}

export async function ownInvoice(db: Queryable, spaceId: string, id: string, lock: boolean) {
  const row = lock ? await store.lockInvoice(db, spaceId, id) : await store.findInvoice(db, spaceId, id);
  if (!row) throw new AppError('not_found', 'No invoice with this id in this space.');
  return row;
}

export function refuseMove(move: Move, row: store.InvoiceRow) {
  if (allows(move, row.status)) return;
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
  revise: 'changed (only a draft can be; a sent invoice is corrected by a credit note)',
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
  const updated =
    'seller' in party && row.seller_snapshot !== null
      ? await reSnapshotSeller(tx, row, changes as ReturnType<typeof sellerColumns>, deps.clock.now())
      : await store.updateInvoice(tx, spaceId, id, { ...changes, updated_at: deps.clock.now() });
  return presentWithPayments(tx, updated, deps.publicUrl, today(deps.clock));
}

/** The text fields a draft's patch may change as they are given. */
const REVISED_TEXTS = [
  'client_name',
  'client_email',
  'client_address',
  'client_country',
  'client_phone',
  'client_reg_number',
  'client_tax_id',
  'issued_on',
  'due_on',
  'notes',
  'purchase_order',
] as const;

/** A stored line read back as the line it was written from (its tax kind one of the domain's). */
function storedLineInput(line: StoredLineItem): LineInput {
  return {
    description: line.description,
    unit_price: line.unit_price,
    quantity: line.quantity,
    tax_kind: TAX_KINDS.find((kind) => kind === line.tax_kind) ?? null,
    tax_rate: line.tax_rate,
    unit: line.unit,
  };
}

/**
 * PATCH …/invoices/{id}: a draft invoice's or quote's client, lines, dates and notes, until it is
 * sent. Fields left out stay; the totals are computed again from the lines it then has.
 */
export async function reviseInvoice(
  tx: Queryable,
  deps: InvoicesDeps,
  spaceId: string,
  id: string,
  patch: InvoicePatchBody,
) {
  const row = await ownInvoice(tx, spaceId, id, true);
  refuseMove('revise', row);
  const lines: LineInput[] = patch.line_items ?? row.line_items.map(storedLineInput);
  const inclusive = patch.prices_include_tax ?? row.prices_include_tax;
  const totals = totalsOrRefuse({ line_items: lines, prices_include_tax: inclusive }, row.currency);
  if (patch.contact_id != null && !(await contactExists(tx, spaceId, patch.contact_id)))
    throw new AppError('invalid_request', 'No contact with this id in this space.', { field: 'contact_id' });
  const { contact_id, client_country_code } = patch;
  // The text fields the patch names; a body's unknown fields are ignored, and a field left out
  // (undefined) stays as it is.
  const given: Partial<Record<(typeof REVISED_TEXTS)[number], string>> = {};
  for (const field of REVISED_TEXTS) {
    const value = patch[field];
    if (value !== undefined) given[field] = value;
  }
  const updated = await store.updateInvoice(tx, spaceId, id, {
    ...given,
    ...(contact_id === undefined ? {} : { contact_id }),
    ...(client_country_code === undefined ? {} : { client_country_code: client_country_code.toUpperCase() }),
    prices_include_tax: inclusive,
    line_items: JSON.stringify(lineItemsOut(totals, { line_items: lines })),
    tax_breakdown: JSON.stringify(breakdownOut(totals)),
    subtotal: formatAmount(totals.subtotal),
    tax_total: formatAmount(totals.taxTotal),
    total: formatAmount(totals.total),
    updated_at: deps.clock.now(),
  });
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
  const locked = await ownInvoice(tx, spaceId, id, true);
  refuseMove('send', locked);
  // The document keeps the seller it is first sent with (a re-send keeps the same).
  const row = await snapshotSeller(tx, locked, deps.clock.now());
  const via = body.via ?? 'email';
  if (row.kind === 'credit_note' && via === 'chat')
    throw new AppError(
      'invalid_request',
      'A credit note is sent by email (or marked sent with "none"), not to a chat.',
      {
        field: 'via',
      },
    );
  const to = body.to || row.client_email;
  const mailId =
    via === 'email'
      ? await queueInvoiceMail(tx, deps, row, to, body.cc ?? [], body.message ?? '', 'send')
      : null;
  const chatPostId = via === 'chat' ? await queueChatPost(tx, deps, row, body.message ?? '', 'send') : null;
  const now = deps.clock.now();
  await store.insertDelivery(tx, {
    id: randomUUID(),
    space_id: spaceId,
    invoice_id: id,
    purpose: 'send',
    via: [via],
    recipient: to,
    cc: body.cc ?? [],
    message: body.message ?? '',
    created_at: now,
    mail_id: mailId,
    chat_post_id: chatPostId,
  });
  const status = afterSend(row.status);
  const updated = await store.updateInvoice(tx, spaceId, id, {
    status,
    sent_at: row.sent_at ?? now,
    updated_at: now,
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
 * Queues the invoice's mail (HTML, text, the link to its public page; the PDF is attached when
 * the mail worker sends it) in the caller's transaction: it leaves after commit, and a rolled
 * back send leaves no mail. Answers the mail's id for the delivery row.
 */
export async function queueInvoiceMail(
  tx: Queryable,
  deps: InvoicesDeps,
  row: store.InvoiceRow,
  to: string,
  cc: string[],
  message: string,
  purpose: 'send' | 'remind',
): Promise<string> {
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
  const pageUrl = publicPageUrl(deps.publicUrl, row.token);
  // The client reads the mail in the book's time zone and locale, as on the document's page.
  const format = await peopleFormatOf(tx, row.space_id);
  const mail =
    row.kind === 'credit_note'
      ? creditNoteMail(row, await correctedNumber(tx, row), message, format)
      : row.kind === 'quote'
        ? quoteMail(row, pageUrl, message, format)
        : invoiceMail(row, pageUrl, message, purpose, format);
  return enqueueMail(tx, deps.clock, deps.mailer.from, {
    spaceId: row.space_id,
    to,
    cc,
    ...mail,
    fromName: row.seller_name || undefined,
    invoiceId: row.id,
  });
}

/** The attachments of an invoice's mail: its PDF as it is when the mail leaves, read without a lock. */
export async function invoiceMailAttachments(
  db: Queryable,
  publicUrl: string,
  spaceId: string,
  invoiceId: string,
) {
  const row = await withSellerShown(db, await ownInvoice(db, spaceId, invoiceId, false));
  const content = await renderInvoicePdf(await invoiceSheet(db, row, publicUrl));
  return [{ filename: `${documentFileBase(row)}.pdf`, content, contentType: 'application/pdf' }];
}

/** The number of the invoice a credit note corrects, or null. */
async function correctedNumber(db: Queryable, row: store.InvoiceRow): Promise<string | null> {
  if (row.corrects_invoice_id === null) return null;
  return (await store.findInvoice(db, row.space_id, row.corrects_invoice_id))?.number ?? null;
}

/** POST .../remind: recorded against a sent or partial invoice, and mailed when mail is configured. */
export async function remindInvoice(
  tx: Queryable,
  deps: InvoicesDeps,
  spaceId: string,
  id: string,
  message: string,
  only?: 'email' | 'chat',
) {
  const row = await ownInvoice(tx, spaceId, id, true);
  refuseMove('remind', row);
  const at = deps.clock.now();
  const via: string[] = [];
  let mailId: string | null = null;
  let chatPostId: string | null = null;
  if (only === 'email' || (only === undefined && deps.mailer?.available && row.client_email !== '')) {
    mailId = await queueInvoiceMail(tx, deps, row, row.client_email, [], message, 'remind');
    via.push('email');
  }
  if (only === 'chat' || (only === undefined && (await deps.chat?.canPost(tx, spaceId, row.contact_id)))) {
    chatPostId = await queueChatPost(tx, deps, row, message, 'remind');
    via.push('chat');
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
    mail_id: mailId,
    chat_post_id: chatPostId,
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
): Promise<store.InvoiceRow> {
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
  return target;
}

const CLIENT_FIELDS = [
  'client_name',
  'client_email',
  'client_address',
  'client_country',
  'client_country_code',
  'client_phone',
  'client_reg_number',
  'client_tax_id',
] as const;

/** A credit note's client: what it names itself, and the corrected invoice's for each field left blank. */
function clientOfCorrected(body: InvoiceCreateBody, corrected: store.InvoiceRow) {
  const client = {} as Record<(typeof CLIENT_FIELDS)[number], string>;
  for (const field of CLIENT_FIELDS) {
    const own = body[field] ?? '';
    client[field] = own.trim() !== '' ? own : corrected[field];
  }
  return client;
}

/**
 * An invoice by its public token (its page at /i/{token}), with the seller it shows. A draft
 * has no public page yet: it is not found until it is sent.
 */
export async function invoiceByToken(db: Queryable, token: string) {
  const found = await store.findByToken(db, token);
  if (found?.kind !== 'invoice' || found.status === 'draft') return undefined;
  const row = await withSellerShown(db, found);
  return { row, open: openAmountOf(row) };
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
      mail_file: row.mail_file ?? row.sent_mail_file,
      created_at: row.created_at.toISOString(),
    })),
  };
}
