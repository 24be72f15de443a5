import fc from 'fast-check';
import { computeTotals, type TaxKind } from '../src/features/invoices/domain.ts';
import type { EinvoiceSource } from '../src/features/invoices/einvoice.ts';
import type { StoredLineItem, StoredSeller } from '../src/platform/db/schema.ts';

// Random invoices and credit notes as the e-invoice tests draw them: 1 to 200 lines, mixed rates
// with 0 %, reverse charge and the other untaxed categories, discount lines, decimal quantities,
// prices with and without tax, EUR, USD and GBP; names, addresses and notes with XML's special
// characters, non-ASCII letters, characters outside the BMP and line breaks; sellers with and
// without a trading name, phone, tax number and street; with and without a payee and delivery.

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

/** Text a person may type: letters, XML's special characters, accents, CJK, an emoji, breaks. */
export const TEXT_PIECES = [
  'a',
  'Z',
  '7',
  ' ',
  '&',
  '<',
  '>',
  '"',
  "'",
  ']]>',
  'ü',
  'ß',
  'é',
  '€',
  '漢',
  '😀',
  '\n',
  '\t',
];
/** The same with text that reads like an entity reference ("&amp;" typed by a person). */
export const TEXT_PIECES_WITH_REFERENCES = [...TEXT_PIECES, '&amp;', '&#38;'];

type Pieces = readonly string[];

const textOf = (pieces: Pieces) => (minLength: number) =>
  fc
    .array(fc.constantFrom(...pieces), { minLength, maxLength: 12 })
    .map((pieces) => pieces.join(''))
    .filter((value) => value.trim().length >= minLength);

const decimal = (scaled: number, places: number) => {
  const negative = scaled < 0;
  const digits = String(Math.abs(scaled)).padStart(places + 1, '0');
  const written = places === 0 ? digits : `${digits.slice(0, -places)}.${digits.slice(-places)}`;
  return negative ? `-${written}` : written;
};

const lineOf = (spec: fc.Arbitrary<LineSpec>, text: ReturnType<typeof textOf>) =>
  fc.record({
    spec,
    description: text(1),
    price: fc.integer({ min: 0, max: 5_000_000 }),
    pricePlaces: fc.constantFrom(0, 2, 3, 4),
    quantity: fc.integer({ min: 1, max: 50_000 }),
    quantityPlaces: fc.constantFrom(0, 1, 3),
    discount: fc.boolean(),
    unit: fc.constantFrom('', 'day', 'hour', 'kg', 'month', 'seats', 'piece', 'Stück & <Satz>'),
  });

/** The value an arbitrary draws. */
type Drawn<A> = A extends fc.Arbitrary<infer T> ? T : never;
type LineDraft = Drawn<ReturnType<typeof lineOf>>;

// One document in twenty is long (13 to 200 lines): a document costs two Schematron runs in the
// property test, and a long one costs several times a short one.
const linesOf = (spec: fc.Arbitrary<LineSpec>, text: ReturnType<typeof textOf>) =>
  fc.oneof(
    { arbitrary: fc.array(lineOf(spec, text), { minLength: 1, maxLength: 12 }), weight: 19 },
    { arbitrary: fc.array(lineOf(spec, text), { minLength: 13, maxLength: 200 }), weight: 1 },
  );

const optional = (arbitrary: fc.Arbitrary<string>) => fc.option(arbitrary, { nil: '' });

const sellerOfText = (text: ReturnType<typeof textOf>) =>
  fc.record({
    name: optional(text(1)),
    legal_name: text(1),
    line1: optional(text(1)),
    line2: optional(text(1)),
    city: optional(text(1)),
    postal_code: fc.constantFrom('', '20457'),
    region: optional(text(1)),
    tax_number: fc.constantFrom('', '22/815/08150'),
    phone: fc.constantFrom('', '+49 40 123456'),
  });

/** Random documents whose texts are made of `pieces`. */
export function invoiceArbitraryOf(pieces: Pieces = TEXT_PIECES) {
  const text = textOf(pieces);
  return fc.record({
    notSubject: fc.integer({ min: 0, max: 9 }).map((draw) => draw === 0),
    mixed: linesOf(MIXABLE, text),
    alone: linesOf(fc.constant<LineSpec>({ kind: 'not_subject', rate: '' }), text),
    currency: fc.constantFrom('EUR', 'USD', 'GBP'),
    inclusive: fc.boolean(),
    creditNote: fc.boolean(),
    seller: sellerOfText(text),
    clientName: text(1),
    clientAddress: fc.array(text(1), { maxLength: 4 }).map((parts) => parts.join('\n')),
    clientRegNumber: fc.constantFrom('', '123 456 789'),
    notes: optional(text(0)),
    purchaseOrder: optional(text(1)),
    exemptReason: text(1),
    delivered: fc.boolean(),
    payee: fc.option(fc.record({ holder: optional(text(1)), bic: fc.constantFrom('', 'COBADEFFXXX') }), {
      nil: null,
    }),
  });
}

export type DrawnInvoice = Drawn<ReturnType<typeof invoiceArbitraryOf>>;

function storedLines(drafts: LineDraft[]): StoredLineItem[] {
  // A discount line takes off at most a tenth of a line's price, so the total stays above zero.
  return drafts.map((draft, index) => ({
    description: `${draft.discount && index > 0 ? 'Discount' : 'Item'} ${index + 1} ${draft.description}`,
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

function sellerOf(value: DrawnInvoice): StoredSeller {
  const drawn = value.seller;
  return {
    name: drawn.name,
    legal_name: drawn.legal_name,
    address: {
      line1: drawn.line1,
      line2: drawn.line2,
      postal_code: drawn.postal_code,
      city: drawn.city,
      region: drawn.region,
      country: 'DE',
    },
    // A seller not subject to VAT has no VAT ID (BR-O-02); its registration identifies it.
    vat_id: value.notSubject ? '' : 'DE123456789',
    tax_number: drawn.tax_number,
    registration_id: 'HRB 12345',
    email: 'billing@nordlicht.example',
    phone: drawn.phone,
    website: '',
    invoice_footer: '',
  };
}

/** The e-invoice source of a drawn document; `index` makes its number. */
export function einvoiceSourceOf(value: DrawnInvoice, index: number): EinvoiceSource {
  const items = storedLines(value.notSubject ? value.alone : value.mixed);
  // An intra-community supply needs its delivery date (BR-IC-11); other documents may have none.
  const delivered = value.delivered || items.some((item) => item.tax_kind === 'intra_community');
  return {
    kind: value.creditNote ? 'credit_note' : 'invoice',
    number: `PROP-${index}`,
    currency: value.currency,
    issued_on: '2026-06-01',
    due_on: '2026-07-01',
    delivered_on: delivered ? '2026-05-30' : null,
    notes: value.notes,
    purchase_order: value.purchaseOrder,
    prices_include_tax: value.inclusive,
    tax_exempt_reason: value.exemptReason,
    line_items: items,
    seller: sellerOf(value),
    client: {
      name: value.clientName,
      email: 'ap@acme.example',
      address: value.clientAddress,
      country_code: 'FR',
      country: '',
      tax_id: 'FR12345678901',
      reg_number: value.clientRegNumber,
    },
    corrects: value.creditNote ? { number: `INV-${index}`, issued_on: '2026-05-01' } : null,
    payee:
      value.payee === null
        ? null
        : { iban: 'DE89370400440532013000', bic: value.payee.bic, holder: value.payee.holder },
  };
}

/** Whether the domain accepts the document (its total is not below zero). */
export function domainAccepts(source: EinvoiceSource): boolean {
  const totals = computeTotals(
    source.line_items.map((line) => ({ ...line, tax_kind: line.tax_kind as TaxKind | null })),
    source.currency,
    source.prices_include_tax,
  );
  return totals.ok && totals.totals.total >= 0n;
}
