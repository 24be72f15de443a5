import type { EInvoiceFormat, FormatFactoryService, Invoice } from '@e-invoice-eu/core';
import type { ValidateFunction } from 'ajv/dist/2019.js';
import { type EinvoiceFormat, type EinvoiceSource, einvoiceData } from './einvoice.ts';
import { einvoiceCodes } from './einvoice-codes.ts';

// Writes the e-invoice data as XML with @e-invoice-eu/core: UBL 2.1 (an Invoice, or a
// CreditNote for type 381) and UN/CEFACT CII. A Factur-X is the document's own PDF drawn as a
// PDF/A-3b with this CII inside (pdf.ts); the library's Factur-X writer, which loads that PDF
// again with pdf-lib, adds the file and saves it once more, is not used. No I/O.
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

/** The two XML syntaxes; a Factur-X carries the CII. */
export type EinvoiceSyntax = Exclude<EinvoiceFormat, 'facturx'>;

const LIBRARY_FORMAT: Readonly<Record<EinvoiceSyntax, string>> = {
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

async function writerOf(format: EinvoiceSyntax): Promise<EInvoiceFormat> {
  return (await formats()).createFormatService(LIBRARY_FORMAT[format], silent);
}

// Each format's schema check, compiled on first use (in the tests).
const checks = new Map<EinvoiceSyntax, ValidateFunction<Invoice>>();

/** The library's schema as the format patches it (UBL needs electronic addresses), compiled once. */
async function checkOf(format: EinvoiceSyntax): Promise<ValidateFunction<Invoice>> {
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
  format: EinvoiceSyntax,
  source: EinvoiceSource,
): Promise<unknown[]> {
  const check = await checkOf(format);
  return check(einvoiceData(source, await einvoiceCodes())) ? [] : [...(check.errors ?? [])];
}

/** The e-invoice of a document in one of the two XML syntaxes. */
export async function renderEinvoice(format: EinvoiceSyntax, source: EinvoiceSource): Promise<Buffer> {
  // Fresh data each call: the writers may change what they are given.
  const invoice = einvoiceData(source, await einvoiceCodes());
  const writer = await writerOf(format);
  writer.fillInvoiceDefaults(invoice);
  const rendered = await writer.generate(invoice, {
    format: (await formats()).normalizeFormat(LIBRARY_FORMAT[format]),
    lang: 'en',
  });
  return typeof rendered === 'string' ? Buffer.from(rendered, 'utf8') : Buffer.from(rendered);
}
