import { createHash } from 'node:crypto';
import anyAscii from 'any-ascii';
import { Document as SepaDocument } from 'sepa';
import { assert, defined } from '../../core/assert.ts';
import { AppError } from '../../core/errors.ts';
import { type AmountE8, formatAmount } from '../../core/money.ts';
import type { AccountRow } from '../accounts/index.ts';
import { checkIban, type Requisites } from '../contacts/index.ts';
import type { PayoutRow } from './store.ts';

// The file a person hands to the bank for a `bank` payment: SEPA pain.001.001.03 (built with
// the `sepa` package) for a euro payment to sepa requisites, CSV for everything else.

export type PaymentFile = { contentType: string; filename: string; body: string };

const CENT_E8 = 1_000_000n;

/**
 * The `sepa` package takes amounts as JavaScript numbers. Only whole cents reach it, so the
 * number is exact (cents / 100 for amounts far below 2^53 cents), and the caller checks the
 * written amount against our own decimal spelling.
 */
function sepaAmount(amount: AmountE8): number {
  if (amount % CENT_E8 !== 0n) {
    throw new AppError('amount_not_accepted', 'A SEPA transfer is in whole euro cents.', { field: 'amount' });
  }
  return Number(amount / CENT_E8) / 100;
}

/** The paying account's SEPA requisites, when it has them. */
function sepaRequisitesOf(account: AccountRow): (Requisites & { scheme: 'sepa' }) | null {
  const requisites = account.requisites as Requisites | null;
  return requisites?.scheme === 'sepa' ? requisites : null;
}

/**
 * The paying account's IBAN: from its bank requisites; an account saved before requisites
 * existed may still carry it in its details (the first valid IBAN written there).
 */
function debtorIban(account: AccountRow): string {
  const requisites = sepaRequisitesOf(account);
  if (requisites) return requisites.iban;
  for (const match of account.details.matchAll(/\b[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){11,32}/g)) {
    const compact = match[0].replaceAll(' ', '');
    // What follows an IBAN may run into the match ("… 00 BIC …"): the longest valid prefix wins.
    for (let length = Math.min(compact.length, 34); length >= 15; length--) {
      const checked = checkIban(compact.slice(0, length));
      if (checked.ok) return checked.value;
    }
  }
  throw new AppError(
    'invalid_request',
    'A SEPA file needs the paying account’s IBAN: add its bank requisites (IBAN, BIC, holder) on the Accounts page.',
    { field: 'account_id' },
  );
}

/** Anything outside the SEPA character set (EPC's Latin subset) once transliterated. */
const OUTSIDE_SEPA = /[^A-Za-z0-9/?:().,'+ -]+/g;

/**
 * Text as a SEPA file may carry it: transliterated to ASCII (accents dropped, Cyrillic, Greek and
 * other scripts spelt in Latin letters by the `any-ascii` package), "&" written "+", anything else
 * outside the SEPA character set a space, spaces collapsed, and cut to `max` characters.
 */
export function sepaText(text: string, max: number): string {
  const latin = anyAscii(text).replaceAll('&', '+').replace(OUTSIDE_SEPA, ' ');
  return latin.replace(/ {2,}/g, ' ').trim().slice(0, max).trim();
}

/** One payment of a SEPA file: the row, its amount and the euro requisites it pays to. */
export type SepaPayment = { row: PayoutRow; amount: AmountE8; requisites: Requisites & { scheme: 'sepa' } };

/** The hex of a payment's id, the reference its file and its end-to-end id carry. */
const referenceOf = (row: PayoutRow) => row.id.replaceAll('-', '');

/**
 * A pain.001.001.03 credit transfer of one or more payments from one account, in one payment
 * block. Ids are at most 35 characters: the message id is 20 hex digits (of the payment's id, or
 * for several payments of a hash of all their ids), which the package prefixes to the block's and
 * each transaction's ids; a transaction's end-to-end id is its payment's whole id (32 digits).
 */
export function sepaXml(payments: readonly SepaPayment[], account: AccountRow, at: Date): string {
  assert(payments.length > 0, 'A SEPA file carries at least one payment.');
  const references = payments.map((payment) => referenceOf(payment.row));
  const doc = new SepaDocument('pain.001.001.03');
  doc.grpHdr.id =
    references.length === 1
      ? defined(references[0], "the one payment's reference").slice(0, 20)
      : createHash('sha256').update(references.join(',')).digest('hex').slice(0, 20);
  doc.grpHdr.created = at;
  // The debtor is the account's holder; only an account without requisites falls back to its name.
  const own = sepaRequisitesOf(account);
  const debtorName = sepaText(own?.holder ?? account.name, 70);
  doc.grpHdr.initiatorName = debtorName;
  const info = doc.createPaymentInfo();
  info.requestedExecutionDate = at;
  info.debtorIBAN = debtorIban(account);
  if (own?.bic) info.debtorBIC = own.bic;
  info.debtorName = debtorName;
  doc.addPaymentInfo(info);
  for (const [position, { row, amount, requisites }] of payments.entries()) {
    const transfer = info.createTransaction();
    transfer.creditorName = sepaText(requisites.holder, 70);
    transfer.creditorIBAN = requisites.iban;
    if (requisites.bic) transfer.creditorBIC = requisites.bic;
    transfer.amount = sepaAmount(amount);
    transfer.remittanceInfo = sepaText(row.note || row.payee, 140);
    transfer.end2endId = defined(references[position], "the payment's reference");
    info.addTransaction(transfer);
  }
  doc.normalize();
  const xml = doc.toString();
  // The package spells the amounts; they must be ours to the cent, in the payments' order.
  const written = [...xml.matchAll(/>([0-9.]+)<\/InstdAmt>/g)].map((match) => match[1]);
  const ours = payments.map((payment) => formatAmount(payment.amount).replace(/0{6}$/, ''));
  assert(
    written.length === ours.length && written.every((text, position) => text === ours[position]),
    'The SEPA file must carry each payment’s exact amount.',
  );
  return xml;
}

const CSV_COLUMNS = [
  'payment_id',
  'amount',
  'currency',
  'payee',
  'scheme',
  'holder',
  'iban',
  'bic',
  'account_number',
  'sort_code',
  'routing_number',
  'swift_bic',
  'bank_name',
  'account_type',
  'note',
] as const;

/** A CSV cell: quoted, quotes doubled, and a leading formula character neutralised. */
function cell(value: string | null | undefined): string {
  const text = value ?? '';
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return `"${safe.replaceAll('"', '""')}"`;
}

function csv(row: PayoutRow, amount: AmountE8, requisites: Requisites) {
  const fields: Record<(typeof CSV_COLUMNS)[number], string | null> = {
    payment_id: row.id,
    amount: formatAmount(amount),
    currency: row.currency,
    payee: row.payee,
    scheme: requisites.scheme,
    holder: requisites.holder,
    iban: requisites.scheme === 'sepa' ? requisites.iban : null,
    bic: requisites.scheme === 'sepa' ? requisites.bic : null,
    account_number: 'account_number' in requisites ? requisites.account_number : null,
    sort_code: requisites.scheme === 'uk' ? requisites.sort_code : null,
    routing_number: requisites.scheme === 'us_ach' ? requisites.routing_number : null,
    swift_bic: requisites.scheme === 'swift' ? requisites.swift_bic : null,
    bank_name: requisites.scheme === 'swift' ? requisites.bank_name : null,
    account_type: requisites.scheme === 'us_ach' ? requisites.account_type : null,
    note: row.note,
  };
  const header = CSV_COLUMNS.join(',');
  return `${header}\r\n${CSV_COLUMNS.map((column) => cell(fields[column])).join(',')}\r\n`;
}

export function paymentFile(row: PayoutRow, amount: AmountE8, account: AccountRow, at: Date): PaymentFile {
  const requisites = row.requisites as Requisites | null;
  assert(requisites, 'A bank payment always carries the requisites it pays to.');
  if (requisites.scheme === 'sepa' && row.currency === 'EUR') {
    return {
      contentType: 'application/xml; charset=utf-8',
      filename: `payment-${row.id}.xml`,
      body: sepaXml([{ row, amount, requisites }], account, at),
    };
  }
  return {
    contentType: 'text/csv; charset=utf-8',
    filename: `payment-${row.id}.csv`,
    body: csv(row, amount, requisites),
  };
}
