import { type Invoice, InvoiceService } from '@e-invoice-eu/core';
import { type EinvoiceFormat, type EinvoiceSource, einvoiceData } from './einvoice.ts';

// Writes the e-invoice data as a file with @e-invoice-eu/core: UBL 2.1 (an Invoice, or a
// CreditNote for type 381), UN/CEFACT CII, and Factur-X EN 16931 (the CII embedded in the
// document's PDF, turned into PDF/A-3 with its XMP metadata). No I/O: the PDF comes in.

export const EINVOICE_CONTENT_TYPES: Readonly<Record<EinvoiceFormat, string>> = {
  facturx: 'application/pdf',
  cii: 'application/xml',
  ubl: 'application/xml',
};

const LIBRARY_FORMAT: Readonly<Record<EinvoiceFormat, string>> = {
  facturx: 'Factur-X-EN16931',
  cii: 'CII',
  ubl: 'UBL',
};

// The library logs through this; a refusal of ours is an exception, never a log line.
const silent = { log: () => {}, warn: () => {}, error: () => {} };

// The service compiles the library's JSON schema once: one per process.
let service: InvoiceService | undefined;

function invoiceService(): InvoiceService {
  service ??= new InvoiceService(silent);
  return service;
}

/** Renders e-invoice data in a format (the PDF is required for Factur-X). */
export async function renderData(format: EinvoiceFormat, data: Invoice, pdf?: Buffer): Promise<Buffer> {
  if (format === 'facturx' && pdf === undefined) throw new Error('Factur-X needs the invoice PDF');
  const rendered = await invoiceService().generate(structuredClone(data), {
    format: LIBRARY_FORMAT[format],
    lang: 'en',
    ...(pdf === undefined
      ? {}
      : { pdf: { buffer: new Uint8Array(pdf), filename: 'invoice.pdf', mimetype: 'application/pdf' } }),
  });
  return typeof rendered === 'string' ? Buffer.from(rendered, 'utf8') : Buffer.from(rendered);
}

/** The e-invoice of a document in a format. */
export function renderEinvoice(
  format: EinvoiceFormat,
  source: EinvoiceSource,
  pdf?: Buffer,
): Promise<Buffer> {
  return renderData(format, einvoiceData(source), pdf);
}
