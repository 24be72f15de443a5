import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { computeTotals, type TaxKind } from '../src/features/invoices/domain.ts';
import { type EinvoiceSource, einvoiceGaps } from '../src/features/invoices/einvoice.ts';
import { type EinvoiceCodes, einvoiceCodes } from '../src/features/invoices/einvoice-codes.ts';
import { einvoiceSchemaProblems, renderEinvoice } from '../src/features/invoices/einvoice-render.ts';
import type { StoredLineItem, StoredSeller } from '../src/platform/db/schema.ts';
import { describeFailures, stylesheet, validateEn16931 } from './en16931.ts';

// 200 random invoices and credit notes, made through the domain and the serializer (no HTTP):
// 1 to 200 lines (one in twenty has more than 12: each document costs two Schematron runs), mixed rates with 0 %, reverse charge and the other untaxed categories,
// discount lines, decimal quantities, prices with and without tax, EUR, USD and GBP. Each comes
// out as CII and as UBL, the library's JSON schema takes its data, and the official EN 16931
// rules find no fatal fault in either file.

const SELLER: StoredSeller = {
  name: 'Nordlicht',
  legal_name: 'Nordlicht Studio GmbH',
  address: {
    line1: 'Hafenstraße 12',
    line2: '',
    postal_code: '20457',
    city: 'Hamburg',
    region: '',
    country: 'DE',
  },
  vat_id: 'DE123456789',
  tax_number: '22/815/08150',
  registration_id: 'HRB 12345',
  email: 'billing@nordlicht.example',
  phone: '',
  website: '',
  invoice_footer: '',
};

type LineSpec = { kind: TaxKind | null; rate: string };

// Taxed and untaxed kinds that may share an invoice (not subject to VAT stands alone: below).
const MIXABLE: fc.Arbitrary<LineSpec> = fc.constantFrom<LineSpec>(
  { kind: 'standard', rate: '19' },
  { kind: 'standard', rate: '20' },
  { kind: 'standard', rate: '21' },
  { kind: 'reduced', rate: '7' },
  { kind: 'reduced', rate: '5.5' },
  { kind: null, rate: '19' },
  { kind: null, rate: '' },
  { kind: 'standard', rate: '0' },
  { kind: 'zero', rate: '0' },
  { kind: 'exempt', rate: '' },
  { kind: 'reverse_charge', rate: '19' },
  { kind: 'intra_community', rate: '' },
  { kind: 'export', rate: '' },
);

const decimal = (scaled: number, places: number) => {
  const negative = scaled < 0;
  const digits = String(Math.abs(scaled)).padStart(places + 1, '0');
  const text = places === 0 ? digits : `${digits.slice(0, -places)}.${digits.slice(-places)}`;
  return negative ? `-${text}` : text;
};

const lineOf = (spec: fc.Arbitrary<LineSpec>) =>
  fc.record({
    spec,
    price: fc.integer({ min: 0, max: 5_000_000 }),
    pricePlaces: fc.constantFrom(0, 2, 3, 4),
    quantity: fc.integer({ min: 1, max: 50_000 }),
    quantityPlaces: fc.constantFrom(0, 1, 3),
    discount: fc.boolean(),
    unit: fc.constantFrom('', 'day', 'hour', 'kg', 'month', 'seats', 'piece'),
  });

/** The value an arbitrary draws. */
type Drawn<A> = A extends fc.Arbitrary<infer T> ? T : never;
type LineDraft = Drawn<ReturnType<typeof lineOf>>;

const lines = (spec: fc.Arbitrary<LineSpec>) =>
  fc.oneof(
    { arbitrary: fc.array(lineOf(spec), { minLength: 1, maxLength: 12 }), weight: 19 },
    { arbitrary: fc.array(lineOf(spec), { minLength: 13, maxLength: 200 }), weight: 1 },
  );

const invoiceArbitrary = fc.record({
  notSubject: fc.integer({ min: 0, max: 9 }).map((draw) => draw === 0),
  mixed: lines(MIXABLE),
  alone: lines(fc.constant<LineSpec>({ kind: 'not_subject', rate: '' })),
  currency: fc.constantFrom('EUR', 'USD', 'GBP'),
  inclusive: fc.boolean(),
  creditNote: fc.boolean(),
});

function storedLines(drafts: LineDraft[]): StoredLineItem[] {
  // A discount line takes off at most a tenth of a line's price, so the total stays above zero.
  return drafts.map((draft, index) => ({
    description: `${draft.discount && index > 0 ? 'Discount' : 'Item'} ${index + 1}`,
    unit_price:
      draft.discount && index > 0
        ? decimal(-Math.max(1, Math.floor(draft.price / 10)), draft.pricePlaces)
        : decimal(draft.price, draft.pricePlaces),
    quantity: draft.discount && index > 0 ? '1' : decimal(draft.quantity, draft.quantityPlaces),
    tax_kind: draft.spec.kind,
    tax_rate: draft.spec.rate,
    unit: draft.unit,
    amount: '0',
  }));
}

function sourceOf(value: Drawn<typeof invoiceArbitrary>, index: number): EinvoiceSource {
  const items = storedLines(value.notSubject ? value.alone : value.mixed);
  return {
    kind: value.creditNote ? 'credit_note' : 'invoice',
    number: `PROP-${index}`,
    currency: value.currency,
    issued_on: '2026-06-01',
    due_on: '2026-07-01',
    delivered_on: '2026-05-30',
    notes: '',
    purchase_order: index % 3 === 0 ? `PO-${index}` : '',
    prices_include_tax: value.inclusive,
    tax_exempt_reason: 'Exempt under Article 132 of the VAT Directive',
    line_items: items,
    seller: value.notSubject ? { ...SELLER, vat_id: '' } : SELLER,
    client: {
      name: 'Acme SARL',
      email: 'ap@acme.example',
      address: '1 rue de Rivoli\n75001 Paris',
      country_code: 'FR',
      country: '',
      tax_id: 'FR12345678901',
      reg_number: '',
    },
    corrects: value.creditNote ? { number: `INV-${index}`, issued_on: '2026-05-01' } : null,
    payee:
      index % 2 === 0 ? { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX', holder: 'Nordlicht' } : null,
  };
}

let codes: EinvoiceCodes;
beforeAll(async () => {
  [codes] = await Promise.all([einvoiceCodes(), stylesheet('cii'), stylesheet('ubl')]);
}, 600_000);

// The serializers and the rules touch no database: the PostgreSQL pass, which exists for what the
// database does, leaves this file to the PGlite pass, to keep CI's time.
const onPostgres = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== '';

describe.skipIf(onPostgres)('e-invoices of random documents', () => {
  it('200 random invoices and credit notes break no fatal EN 16931 rule, in CII or UBL', async () => {
    let index = 0;
    await fc.assert(
      fc.asyncProperty(invoiceArbitrary, async (value) => {
        index += 1;
        const source = sourceOf(value, index);
        // The document is one the domain accepts (its total is not below zero).
        const totals = computeTotals(
          source.line_items.map((line) => ({ ...line, tax_kind: line.tax_kind as TaxKind | null })),
          source.currency,
          source.prices_include_tax,
        );
        if (!totals.ok || totals.totals.total < 0n) return;
        expect(einvoiceGaps(source, 'ubl', codes)).toEqual([]);
        for (const syntax of ['cii', 'ubl'] as const) {
          // What the library's own schema would refuse (it is not checked on each request).
          expect(await einvoiceSchemaProblems(syntax, source)).toEqual([]);
          const xml = (await renderEinvoice(syntax, source)).toString('utf8');
          const failures = await validateEn16931(syntax, xml);
          expect(
            failures.map((failure) => failure.id),
            `${syntax} of ${source.line_items.length} lines, ${source.currency}, inclusive ${source.prices_include_tax}:\n${describeFailures(failures)}`,
          ).toEqual([]);
        }
      }),
      { numRuns: 200, endOnFailure: true },
    );
  }, 1_800_000);
});
