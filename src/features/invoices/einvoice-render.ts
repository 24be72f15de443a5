import type { EInvoiceFormat, FormatFactoryService, Invoice } from '@e-invoice-eu/core';
import type { ValidateFunction } from 'ajv/dist/2019.js';
import { type EinvoiceFormat, type EinvoiceSource, einvoiceData } from './einvoice.ts';
import { einvoiceCodes } from './einvoice-codes.ts';
import { strictPdfA3 } from './einvoice-pdfa.ts';

// Writes the e-invoice data as a file with @e-invoice-eu/core: UBL 2.1 (an Invoice, or a
// CreditNote for type 381), UN/CEFACT CII, and Factur-X EN 16931 (the CII embedded in the
// document's PDF, turned into PDF/A-3 with its XMP metadata, then made strict by
// einvoice-pdfa.ts). No I/O: the PDF comes in.
//
// The library's own entry (InvoiceService.generate) compiles its JSON schema anew and checks the
// data against it on every call: about 300 ms of CPU for 200 lines, then still ~35 ms once
// compiled. Here each format's writer is called directly (fill the format's defaults, write).
// The data comes from einvoiceData alone, from fixed tables and code lists checked before
// (einvoiceGaps), so the schema check runs in the tests (`einvoiceSchemaProblems`, on every
// document the property test makes), not on each request. The library is loaded on first use.

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

let factory: Promise<FormatFactoryService> | undefined;

function formats(): Promise<FormatFactoryService> {
  factory ??= import('@e-invoice-eu/core').then((library) => new library.FormatFactoryService());
  return factory;
}

async function writerOf(format: EinvoiceFormat): Promise<EInvoiceFormat> {
  return (await formats()).createFormatService(LIBRARY_FORMAT[format], silent);
}

// Each format's schema check, compiled on first use (in the tests).
const checks = new Map<EinvoiceFormat, ValidateFunction<Invoice>>();

/** The library's schema as the format patches it (UBL needs electronic addresses), compiled once. */
async function checkOf(format: EinvoiceFormat): Promise<ValidateFunction<Invoice>> {
  let check = checks.get(format);
  if (check === undefined) {
    const [{ invoiceSchema }, { Ajv2019 }] = await Promise.all([
      import('@e-invoice-eu/core'),
      import('ajv/dist/2019.js'),
    ]);
    const schema = structuredClone(invoiceSchema);
    (await writerOf(format)).patchSchema(schema);
    check = new Ajv2019({ strict: true, allErrors: true, useDefaults: true }).compile(schema);
    checks.set(format, check);
  }
  return check;
}

/** What the library's schema (as the format patches it) finds wrong in a document's e-invoice data. */
export async function einvoiceSchemaProblems(
  format: EinvoiceFormat,
  source: EinvoiceSource,
): Promise<unknown[]> {
  const check = await checkOf(format);
  return check(einvoiceData(source, await einvoiceCodes())) ? [] : [...(check.errors ?? [])];
}

/** The e-invoice of a document in a format (the PDF is required for Factur-X). */
export async function renderEinvoice(
  format: EinvoiceFormat,
  source: EinvoiceSource,
  pdf?: Buffer,
): Promise<Buffer> {
  if (format === 'facturx' && pdf === undefined) throw new Error('Factur-X needs the invoice PDF');
  // Fresh data each call: the writers may change what they are given.
  const invoice = einvoiceData(source, await einvoiceCodes());
  const writer = await writerOf(format);
  writer.fillInvoiceDefaults(invoice);
  const rendered = await writer.generate(invoice, {
    format: (await formats()).normalizeFormat(LIBRARY_FORMAT[format]),
    lang: 'en',
    ...(pdf === undefined
      ? {}
      : { pdf: { buffer: new Uint8Array(pdf), filename: 'invoice.pdf', mimetype: 'application/pdf' } }),
  });
  if (typeof rendered === 'string') return Buffer.from(rendered, 'utf8');
  if (format !== 'facturx') return Buffer.from(rendered);
  const facts = { number: source.number, seller: source.seller.legal_name.trim(), at: new Date() };
  return Buffer.from(await strictPdfA3(rendered, facts));
}
