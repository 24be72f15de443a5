import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { einvoiceDocument, einvoiceGaps } from '../src/features/invoices/einvoice.ts';
import { type EinvoiceCodes, einvoiceCodes } from '../src/features/invoices/einvoice-codes.ts';
import { renderEinvoice } from '../src/features/invoices/einvoice-render.ts';
import {
  domainAccepts,
  einvoiceSourceOf,
  invoiceArbitraryOf,
  TEXT_PIECES_WITH_REFERENCES,
} from './einvoice-arbitrary.ts';
import { librarySchemaProblems } from './einvoice-oracle.ts';
import { describeFailures, stylesheet, validateEn16931 } from './en16931.ts';

// 200 random invoices and credit notes (einvoice-arbitrary.ts), made through the domain and the
// writers (no HTTP). Each comes out as CII and as UBL, the library's JSON schema takes its data,
// and the official EN 16931 rules find no fatal fault in either file.

let codes: EinvoiceCodes;
beforeAll(async () => {
  codes = einvoiceCodes();
  await Promise.all([stylesheet('cii'), stylesheet('ubl')]);
}, 600_000);

// The writers and the rules touch no database: the PostgreSQL pass, which exists for what the
// database does, leaves this file to the PGlite pass, to keep CI's time.
const onPostgres = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== '';

describe.skipIf(onPostgres)('e-invoices of random documents', () => {
  it('200 random invoices and credit notes break no fatal EN 16931 rule, in CII or UBL', async () => {
    let index = 0;
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(invoiceArbitraryOf(TEXT_PIECES_WITH_REFERENCES), async (value) => {
        index += 1;
        const source = einvoiceSourceOf(value, index);
        if (!domainAccepts(source)) return;
        expect(einvoiceGaps(source, 'ubl', codes)).toEqual([]);
        for (const syntax of ['cii', 'ubl'] as const) {
          // What the library's own schema would refuse.
          expect(await librarySchemaProblems(syntax, einvoiceDocument(source, codes))).toEqual([]);
          const xml = renderEinvoice(syntax, source).toString('utf8');
          const failures = await validateEn16931(syntax, xml);
          expect(
            failures.map((failure) => failure.id),
            `${syntax} of ${source.line_items.length} lines, ${source.currency}, inclusive ${source.prices_include_tax}:\n${describeFailures(failures)}`,
          ).toEqual([]);
        }
        checked += 1;
      }),
      { numRuns: 200, endOnFailure: true },
    );
    // Most drawn documents have a total of at least zero: the rules ran on them.
    expect(checked).toBeGreaterThan(100);
  }, 1_800_000);
});
