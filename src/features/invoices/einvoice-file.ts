import { AppError } from '../../core/errors.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { requireAccount } from '../accounts/index.ts';
import type { Requisites } from '../contacts/index.ts';
import { requireRole } from '../spaces/index.ts';
import { type EinvoiceFormat, type EinvoiceSource, einvoiceGaps } from './einvoice.ts';
import { einvoiceCodes } from './einvoice-codes.ts';
import { EINVOICE_CONTENT_TYPES, renderEinvoice } from './einvoice-render.ts';
import type { InvoicesDeps } from './lifecycle.ts';
import { documentFileBase, renderInvoicePdf } from './pdf.ts';
import { invoiceSheet } from './pdf-sheet.ts';
import { withSellerShown } from './seller.ts';
import * as store from './store.ts';

// An invoice or credit note as an e-invoice file (Factur-X, CII or UBL): read the document with
// the seller it shows, check that EN 16931 has what it needs, render. Reads only; nothing here
// changes the document.

/** What the e-invoice of a document (with the seller it shows) is made from. */
export async function einvoiceSourceOf(db: Queryable, row: store.InvoiceRow): Promise<EinvoiceSource> {
  const corrected =
    row.corrects_invoice_id === null
      ? undefined
      : await store.findInvoice(db, row.space_id, row.corrects_invoice_id);
  const account = await requireAccount(db, row.space_id, row.account_id);
  const requisites = account.requisites as Requisites | null;
  const seller = row.seller_snapshot;
  if (seller === null) throw new Error('withSellerShown leaves a document with its seller');
  return {
    kind: row.kind === 'credit_note' ? 'credit_note' : 'invoice',
    number: row.number,
    currency: row.currency,
    issued_on: row.issued_on,
    due_on: row.due_on,
    delivered_on: row.delivered_on,
    notes: row.notes,
    purchase_order: row.purchase_order,
    prices_include_tax: row.prices_include_tax,
    tax_exempt_reason: row.tax_exempt_reason,
    line_items: row.line_items,
    seller,
    client: {
      name: row.client_name,
      email: row.client_email,
      address: row.client_address,
      country_code: row.client_country_code,
      country: row.client_country,
      tax_id: row.client_tax_id,
      reg_number: row.client_reg_number,
    },
    corrects: corrected === undefined ? null : { number: corrected.number, issued_on: corrected.issued_on },
    payee:
      requisites?.scheme === 'sepa'
        ? { iban: requisites.iban, bic: requisites.bic ?? '', holder: requisites.holder }
        : null,
  };
}

export type EinvoiceFile = { filename: string; contentType: string; body: Buffer };

/** The e-invoice of one document of a space; 422 `einvoice_incomplete` names what is missing. */
export async function einvoiceFile(
  deps: Pick<InvoicesDeps, 'db' | 'publicUrl'>,
  spaceId: string,
  id: string,
  format: EinvoiceFormat,
): Promise<EinvoiceFile> {
  const found = await store.findInvoice(deps.db, spaceId, id);
  if (!found) throw new AppError('not_found', 'No invoice with this id in this space.');
  if (found.kind === 'quote') {
    throw new AppError('invoice_state', 'A quote has no e-invoice; the invoice made from it has.', {
      kind: found.kind,
    });
  }
  const row = await withSellerShown(deps.db, found);
  const source = await einvoiceSourceOf(deps.db, row);
  const missing = einvoiceGaps(source, format, einvoiceCodes());
  if (missing.length > 0) {
    throw new AppError(
      'einvoice_incomplete',
      `EN 16931 needs what this ${row.kind === 'credit_note' ? 'credit note' : 'invoice'} or the book's seller profile lacks: ${missing.join(', ')}.`,
      { missing, format },
    );
  }
  const body =
    format === 'facturx'
      ? await renderInvoicePdf(await invoiceSheet(deps.db, row, deps.publicUrl), {
          cii: renderEinvoice('cii', source),
        })
      : renderEinvoice(format, source);
  const base = documentFileBase(row);
  const extension = format === 'facturx' ? 'pdf' : `${format}.xml`;
  return { filename: `${base}.${extension}`, contentType: EINVOICE_CONTENT_TYPES[format], body };
}

/** The same for a member of the space (the app's Download menu and the app API). */
export async function einvoiceFileInApp(
  deps: Pick<InvoicesDeps, 'db' | 'publicUrl'>,
  userId: string,
  spaceId: string,
  id: string,
  format: EinvoiceFormat,
): Promise<EinvoiceFile> {
  await requireRole(deps.db, spaceId, userId);
  return einvoiceFile(deps, spaceId, id, format);
}
