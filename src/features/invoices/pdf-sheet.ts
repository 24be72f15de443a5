import { epcPayload, groupedIban } from '../../core/bank-transfer.ts';
import { asAmount } from '../../core/money.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { requireAccount } from '../accounts/index.ts';
import type { Requisites } from '../contacts/index.ts';
import { peopleFormatOf, sellerLogoOf } from '../spaces/index.ts';
import { openAmountOf } from './domain.ts';
import type { InvoiceSheet, PdfPayment } from './pdf.ts';
import { publicPageUrl } from './presentation.ts';
import * as store from './store.ts';

// What the PDF shows beyond the document's own row, read before it is drawn: the book's logo,
// the number of the invoice a credit note corrects, and how to pay (the account's bank
// requisites, the pay link).

/** The account's requisites as a payer types them, label and value. */
export function requisiteRows(requisites: Requisites): [string, string][] {
  switch (requisites.scheme) {
    case 'sepa':
      return [
        ['Account holder', requisites.holder],
        ['IBAN', groupedIban(requisites.iban)],
        ...(requisites.bic ? [['BIC', requisites.bic] as [string, string]] : []),
      ];
    case 'uk':
      return [
        ['Account holder', requisites.holder],
        ['Account number', requisites.account_number],
        ['Sort code', requisites.sort_code],
      ];
    case 'us_ach':
      return [
        ['Account holder', requisites.holder],
        ['Account number', requisites.account_number],
        ['Routing number', requisites.routing_number],
      ];
    case 'swift':
      return [
        ['Account holder', requisites.holder],
        ...(requisites.bank_name ? [['Bank', requisites.bank_name] as [string, string]] : []),
        ['Account number', requisites.account_number],
        ['SWIFT/BIC', requisites.swift_bic],
      ];
  }
}

/** Only an invoice still to be paid says how to pay it. */
const PAYABLE: readonly store.InvoiceRow['status'][] = ['sent', 'partial'];

async function paymentOf(
  db: Queryable,
  row: store.InvoiceRow,
  due: bigint,
  publicUrl: string,
): Promise<PdfPayment | null> {
  if (row.kind !== 'invoice' || !PAYABLE.includes(row.status) || due <= 0n) return null;
  const account = await requireAccount(db, row.space_id, row.account_id);
  // Requisites are checked by contacts' rules before they are written (accounts' PATCH).
  const requisites = account.kind === 'bank' ? (account.requisites as Requisites | null) : null;
  const bank =
    requisites === null
      ? null
      : {
          rows: requisiteRows(requisites),
          // The invoice's number is the reference: it is what the seller looks for on the statement.
          reference: row.number,
          epcPayload:
            requisites.scheme === 'sepa' && row.currency === 'EUR'
              ? epcPayload({
                  bic: requisites.bic,
                  name: requisites.holder,
                  iban: requisites.iban,
                  amount: asAmount(due),
                  reference: row.number,
                })
              : null,
        };
  return { url: publicPageUrl(publicUrl, row.token), bank };
}

export async function invoiceSheet(
  db: Queryable,
  row: store.InvoiceRow,
  publicUrl: string,
): Promise<InvoiceSheet> {
  const corrected = row.corrects_invoice_id
    ? await store.findInvoice(db, row.space_id, row.corrects_invoice_id)
    : undefined;
  const due = openAmountOf(row);
  const logo = await sellerLogoOf(db, row.space_id, row.seller_snapshot?.logo_sha256);
  return {
    row,
    logo: logo && { bytes: logo.bytes, width: logo.width, height: logo.height },
    corrects: corrected?.number ?? null,
    due,
    payment: await paymentOf(db, row, due, publicUrl),
    format: await peopleFormatOf(db, row.space_id),
  };
}
