import { type EinvoiceFormat, type EinvoiceSource, einvoiceDocument } from './einvoice.ts';
import { ciiXml } from './einvoice-cii.ts';
import { einvoiceCodes } from './einvoice-codes.ts';
import { ublXml } from './einvoice-ubl.ts';

// Writes an e-invoice as XML: UBL 2.1 (an Invoice, or a CreditNote for type 381) or UN/CEFACT
// CII. A Factur-X is the document's own PDF drawn as a PDF/A-3b with this CII inside (pdf.ts).
// The writers are ours (einvoice-ubl.ts, einvoice-cii.ts): they place einvoiceDocument's values
// in schema order as they go. No I/O.

export const EINVOICE_CONTENT_TYPES: Readonly<Record<EinvoiceFormat, string>> = {
  facturx: 'application/pdf',
  cii: 'application/xml',
  ubl: 'application/xml',
};

/** The two XML syntaxes; a Factur-X carries the CII. */
export type EinvoiceSyntax = Exclude<EinvoiceFormat, 'facturx'>;

const WRITERS = { cii: ciiXml, ubl: ublXml } as const;

/** The e-invoice of a document in one of the two XML syntaxes. */
export function renderEinvoice(format: EinvoiceSyntax, source: EinvoiceSource): Buffer {
  return Buffer.from(WRITERS[format](einvoiceDocument(source, einvoiceCodes())), 'utf8');
}
