import { asAmount, formatAmountFixed, formatAmountTrimmed, SCALE } from '../../core/money.ts';
import type { StoredLineItem, StoredSeller } from '../../platform/db/schema.ts';
import {
  divideHalfUp,
  type EinvoiceFormat,
  formatRate,
  isTaxed,
  minorUnitsOf,
  type PricedLine,
  priceLine,
  type TaxKind,
  type TaxRateE8,
  type Totals,
  totalsOf,
} from './domain.ts';
import { type EinvoiceCodes, unitCodeOf } from './einvoice-codes.ts';
import {
  CANONICAL_KIND,
  EXEMPTION,
  NEEDS_SELLER_TAX_ID,
  NEEDS_SELLER_VAT_ID,
  type VatCategory,
  vatCategoryOf,
} from './einvoice-tax.ts';

// An invoice or credit note as an EN 16931 document, without I/O: what the book knows in, the
// e-invoice's business terms out (`EinvoiceDocument`), which einvoice-ubl.ts and einvoice-cii.ts
// write as UBL and CII.
// EN 16931 amounts have at most two decimals: the lines are priced again at the currency's minor
// unit capped at two, with the domain's own rounding, so every sum the standard checks (BR-CO-10,
// BR-CO-13 to BR-CO-15, BR-S-08/09) holds exactly.

export { EINVOICE_FORMATS, type EinvoiceFormat } from './domain.ts';

/** What the e-invoice is made from: the document with the seller it shows, and what it refers to. */
export type EinvoiceSource = {
  kind: 'invoice' | 'credit_note';
  number: string;
  currency: string;
  issued_on: string;
  due_on: string;
  delivered_on: string | null;
  notes: string;
  purchase_order: string;
  prices_include_tax: boolean;
  tax_exempt_reason: string | null;
  line_items: readonly StoredLineItem[];
  seller: StoredSeller;
  client: {
    name: string;
    email: string;
    address: string;
    country_code: string;
    country: string;
    tax_id: string;
    reg_number: string;
  };
  /** For a credit note: the invoice it corrects. */
  corrects: { number: string; issued_on: string } | null;
  /** Where the buyer pays by transfer, when the account has SEPA requisites. */
  payee: { iban: string; bic: string; holder: string } | null;
};

/** A VAT identifier starts with its country's code (BR-CO-9; Greece writes EL). */
function isVatId(value: string, codes: EinvoiceCodes): boolean {
  const prefix = value.slice(0, 2);
  return /^[A-Z]{2}[0-9A-Za-z+*.]{2,13}$/.test(value) && (prefix === 'EL' || codes.isCountry(prefix));
}

function buyerCountry(source: EinvoiceSource): string {
  const code = source.client.country_code.trim().toUpperCase();
  if (code !== '') return code;
  const written = source.client.country.trim();
  return /^[A-Za-z]{2}$/.test(written) ? written.toUpperCase() : '';
}

type Line = {
  item: StoredLineItem;
  category: VatCategory;
  priced: PricedLine;
};

/** Each line with its category, priced again at the e-invoice's exponent under its category's kind. */
function categorizedLines(source: EinvoiceSource, exponent: number): Line[] {
  return source.line_items.map((item, index) => {
    const rate = priceLine({ description: '', unit_price: '0', tax_rate: item.tax_rate }, index, exponent);
    if (!rate.ok) throw new Error(`stored line ${index} has a bad tax_rate`);
    const category = vatCategoryOf(item.tax_kind as TaxKind | null, rate.value.taxRate);
    const priced = priceLine(
      {
        description: item.description,
        unit_price: item.unit_price,
        quantity: item.quantity,
        tax_kind: CANONICAL_KIND[category],
        tax_rate: category === 'S' ? item.tax_rate : '',
        unit: item.unit,
      },
      index,
      exponent,
    );
    if (!priced.ok) throw new Error(`stored line ${index} no longer prices: ${priced.problem.detail}`);
    return { item, category, priced: priced.value };
  });
}

/** The EN 16931 exponent of a currency: its minor unit, at most two decimals. */
export function einvoiceExponent(currency: string): number {
  return Math.min(minorUnitsOf(currency), 2);
}

/**
 * What EN 16931 (and, for UBL, Peppol's electronic addresses) needs that the document or the
 * book's seller profile lacks, as the field names a person fixes: `seller.*` are the profile's
 * (Book settings), the others the document's. Empty when the e-invoice can be made.
 */
export function einvoiceGaps(source: EinvoiceSource, format: EinvoiceFormat, codes: EinvoiceCodes): string[] {
  const missing = new Set<string>();
  const seller = source.seller;
  const lines = categorizedLines(source, einvoiceExponent(source.currency));
  const categories = new Set(lines.map((line) => line.category));
  // Rates have at most four decimals, as the library used as the tests' oracle takes them.
  if (lines.some((line) => line.priced.taxRate % 10n ** BigInt(SCALE - 4) !== 0n))
    missing.add('line_items.tax_rate');
  const notSubject = categories.has('O');
  if (!codes.isCurrency(source.currency)) missing.add('currency');
  if (seller.legal_name.trim() === '') missing.add('seller.legal_name');
  if (!codes.isCountry(seller.address.country.toUpperCase())) missing.add('seller.address.country');
  const vatId = seller.vat_id.trim();
  if (vatId !== '' && !isVatId(vatId, codes)) missing.add('seller.vat_id');
  const hasVatId = vatId !== '' && isVatId(vatId, codes);
  const hasTaxNumber = seller.tax_number.trim() !== '';
  if ([...categories].some((c) => NEEDS_SELLER_TAX_ID.has(c)) && !hasVatId && !hasTaxNumber)
    missing.add('seller.vat_id');
  if ([...categories].some((c) => NEEDS_SELLER_VAT_ID.has(c)) && !hasVatId) missing.add('seller.vat_id');
  // BR-CO-26: the buyer identifies the seller by a VAT ID or a legal registration.
  if ((!hasVatId || notSubject) && seller.registration_id.trim() === '')
    missing.add(notSubject ? 'seller.registration_id' : 'seller.vat_id');
  if (source.client.name.trim() === '') missing.add('client_name');
  if (!codes.isCountry(buyerCountry(source))) missing.add('client_country_code');
  const buyerVat = isVatId(source.client.tax_id.trim(), codes);
  if (categories.has('K') && !buyerVat) missing.add('client_tax_id');
  if (categories.has('AE') && !buyerVat && source.client.reg_number.trim() === '')
    missing.add('client_tax_id');
  if (categories.has('K') && source.delivered_on === null) missing.add('delivered_on');
  if (categories.has('E') && (source.tax_exempt_reason ?? '').trim() === '') missing.add('tax_exempt_reason');
  // BR-O-11/12: a document not subject to VAT has no line of another category.
  if (notSubject && categories.size > 1) missing.add('line_items.tax_kind');
  if (format === 'ubl') {
    if (seller.email.trim() === '') missing.add('seller.email');
    if (source.client.email.trim() === '') missing.add('client_email');
  }
  return [...missing];
}

const fixed = (amount: bigint) => {
  const text = formatAmountFixed(asAmount(amount), 2);
  if (text === null) throw new Error('an e-invoice amount has more than two decimals');
  return text;
};

/**
 * The net of each line. With exclusive prices it is the line's amount. With inclusive prices a
 * line's amount is gross: each line's net is its gross less its share of the tax, and the group's
 * rounding rest goes to its largest line, so the nets add up to the group's net exactly.
 */
function lineNets(lines: Line[], inclusive: boolean, exponent: number, groupNets: Map<string, bigint>) {
  const nets = lines.map((line) => line.priced.amount as bigint);
  if (!inclusive) return nets;
  const step = 10n ** BigInt(SCALE - exponent);
  const hundred = 100n * 10n ** BigInt(SCALE);
  const largest = new Map<string, number>();
  const sums = new Map<string, bigint>();
  lines.forEach((line, index) => {
    const key = groupKeyOf(line.priced);
    if (isTaxed(line.priced.taxKind, line.priced.taxRate)) {
      const net = divideHalfUp(line.priced.amount * hundred, (hundred + line.priced.taxRate) * step) * step;
      nets[index] = net;
    }
    sums.set(key, (sums.get(key) ?? 0n) + (nets[index] ?? 0n));
    const top = largest.get(key);
    const magnitude = (amount: bigint) => (amount < 0n ? -amount : amount);
    if (top === undefined || magnitude(line.priced.amount) > magnitude(lines[top]?.priced.amount ?? 0n))
      largest.set(key, index);
  });
  for (const [key, index] of largest) {
    const rest = (groupNets.get(key) ?? 0n) - (sums.get(key) ?? 0n);
    nets[index] = (nets[index] ?? 0n) + rest;
  }
  return nets;
}

function groupKeyOf(line: { taxKind: TaxKind | null; taxRate: bigint }) {
  return `${line.taxKind ?? ''}|${line.taxRate}`;
}

/** A VAT category as a line or a breakdown states it; `O` states no rate (BR-O-05). */
export type EinvoiceTaxCategory = { code: VatCategory; percent: string | null };

/** A postal address, its parts trimmed; an empty part is null. */
export type EinvoiceAddress = {
  line1: string | null;
  line2: string | null;
  line3: string | null;
  city: string | null;
  postalCode: string | null;
  region: string | null;
  country: string;
};

/**
 * An invoice or credit note as EN 16931 states it, whatever the syntax: the business terms
 * with their values written out (amounts with two decimals, dates as YYYY-MM-DD). The UBL and
 * CII writers (einvoice-ubl.ts, einvoice-cii.ts) only place these values; no rule is decided there.
 */
export type EinvoiceDocument = {
  /** BT-3: 380 an invoice, 381 a credit note. */
  typeCode: '380' | '381';
  number: string;
  issuedOn: string;
  /** BT-9; a credit note has none. */
  dueOn: string | null;
  note: string | null;
  currency: string;
  /** The purchase order, as the buyer's reference (BT-10) and the order's (BT-13). */
  orderReference: string | null;
  /** BG-3: the invoice a credit note corrects. */
  corrects: { number: string; issuedOn: string } | null;
  seller: {
    /** BT-34, scheme EM. */
    endpoint: string | null;
    tradingName: string | null;
    legalName: string;
    registrationId: string | null;
    vatId: string | null;
    /** BT-32, the tax registration (scheme FC). */
    taxNumber: string | null;
    address: EinvoiceAddress;
    phone: string | null;
    email: string | null;
  };
  buyer: {
    endpoint: string | null;
    legalName: string;
    registrationId: string | null;
    vatId: string | null;
    address: EinvoiceAddress;
    email: string | null;
  };
  /** BT-72 and the country delivered to (BT-80). */
  delivery: { date: string; country: string } | null;
  /** BG-16/BG-17: a SEPA credit transfer (code 58) to this account. */
  payee: { paymentId: string; iban: string; holder: string | null; bic: string | null } | null;
  /** BT-20. */
  paymentTerms: string;
  taxTotal: string;
  breakdown: {
    taxable: string;
    tax: string;
    category: EinvoiceTaxCategory;
    exemptionCode: string | null;
    exemptionReason: string | null;
  }[];
  totals: { lines: string; taxExclusive: string; taxInclusive: string; payable: string };
  lines: {
    id: string;
    /** The unit word a vague unit code does not say. */
    note: string | null;
    quantity: string;
    unitCode: string;
    net: string;
    name: string;
    tax: EinvoiceTaxCategory;
    /** Net price (BT-146) for the base quantity (BT-149), when it is not one unit. */
    price: string;
    baseQuantity: string | null;
  }[];
};

function taxCategoryOf(category: VatCategory, rate: TaxRateE8): EinvoiceTaxCategory {
  // BR-O-05: a line not subject to VAT has no rate.
  return { code: category, percent: category === 'O' ? null : formatRate(rate) };
}

const ONE = 10n ** BigInt(SCALE);

/**
 * A price as two decimals for a base quantity (BT-149), as the tests' oracle takes it: 99.995 per unit is
 * 999.95 per 10 units. Quantity × price ÷ base quantity is unchanged, so the net is too.
 */
function twoDecimalPrice(price: bigint): { amount: bigint; base: bigint | null } {
  let amount = price;
  let base = ONE;
  while (amount % 10n ** BigInt(SCALE - 2) !== 0n) {
    amount *= 10n;
    base *= 10n;
  }
  return { amount, base: base === ONE ? null : base };
}

/**
 * The e-invoice lines: price and quantity so that quantity × price ÷ base quantity is the net.
 * With inclusive prices the price is the line's net for the whole quantity (base quantity = the
 * quantity), since the net price of one unit need not have two decimals.
 */
function documentLines(
  lines: Line[],
  nets: bigint[],
  source: EinvoiceSource,
  codes: EinvoiceCodes,
): EinvoiceDocument['lines'] {
  return lines.map((line, index) => {
    const net = nets[index] ?? 0n;
    const unit = unitCodeOf(line.item.unit, codes);
    const negativePrice = line.priced.unitPrice < 0n;
    // BR-27: the item's net price is never negative; a discount line counts negative units.
    const price = source.prices_include_tax
      ? { amount: net < 0n ? -net : net, base: line.priced.quantity }
      : twoDecimalPrice(negativePrice ? -line.priced.unitPrice : line.priced.unitPrice);
    return {
      id: String(index + 1),
      note: unit.word === null ? null : `Unit: ${unit.word}`,
      quantity: formatAmountTrimmed(asAmount(negativePrice ? -line.priced.quantity : line.priced.quantity)),
      unitCode: unit.code,
      net: fixed(net),
      name: line.item.description,
      tax: taxCategoryOf(line.category, line.priced.taxRate),
      price: fixed(price.amount),
      baseQuantity: price.base === null ? null : formatAmountTrimmed(asAmount(price.base)),
    };
  });
}

/** A trimmed value, or null when nothing is left. */
function present(value: string | undefined): string | null {
  const trimmed = (value ?? '').trim();
  return trimmed === '' ? null : trimmed;
}

function sellerOf(source: EinvoiceSource, notSubject: boolean): EinvoiceDocument['seller'] {
  const seller = source.seller;
  const email = present(seller.email);
  return {
    endpoint: email,
    tradingName:
      present(seller.name) !== null && seller.name !== seller.legal_name ? seller.name.trim() : null,
    legalName: seller.legal_name.trim(),
    registrationId: present(seller.registration_id),
    // BR-O-02: a document not subject to VAT names no seller VAT ID.
    vatId: notSubject ? null : present(seller.vat_id),
    taxNumber: present(seller.tax_number),
    address: {
      line1: present(seller.address.line1),
      line2: present(seller.address.line2),
      line3: null,
      city: present(seller.address.city),
      postalCode: present(seller.address.postal_code),
      region: present(seller.address.region),
      country: seller.address.country.toUpperCase(),
    },
    phone: present(seller.phone),
    email,
  };
}

function buyerOf(
  source: EinvoiceSource,
  notSubject: boolean,
  codes: EinvoiceCodes,
): EinvoiceDocument['buyer'] {
  const client = source.client;
  // The client's address is one text: its first two parts are the street lines, the rest one line.
  const [line1, line2, ...rest] = client.address
    .split(/\r?\n|,\s*/)
    .map((part) => part.trim())
    .filter((part) => part !== '');
  const vatId = client.tax_id.trim();
  const email = present(client.email);
  return {
    endpoint: email,
    legalName: client.name.trim(),
    registrationId: present(client.reg_number),
    vatId: isVatId(vatId, codes) && !notSubject ? vatId : null,
    address: {
      line1: present(line1),
      line2: present(line2),
      line3: present(rest.join(', ')),
      city: null,
      postalCode: null,
      region: null,
      country: buyerCountry(source),
    },
    email,
  };
}

/** Customization and profile of Peppol BIS Billing 3.0 (the UBL the European networks carry). */
export const PEPPOL_CUSTOMIZATION_ID =
  'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0';
export const PEPPOL_PROFILE_ID = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';
/** The specification a Factur-X of profile EN 16931 names in its CII (BT-24). */
export const EN16931_SPECIFICATION_ID = 'urn:cen.eu:en16931:2017';

/** The VAT breakdown (BG-23): one per category and rate, with why no VAT is charged. */
function breakdownOf(totals: Totals, source: EinvoiceSource): EinvoiceDocument['breakdown'] {
  return totals.breakdown.map((group) => {
    const category = vatCategoryOf(group.taxKind, group.taxRate);
    const standard = EXEMPTION[category];
    return {
      taxable: fixed(group.net),
      tax: fixed(group.tax),
      category: taxCategoryOf(category, group.taxRate),
      exemptionCode: category === 'E' ? null : (standard?.code ?? null),
      exemptionReason: category === 'E' ? (source.tax_exempt_reason ?? '').trim() : (standard?.text ?? null),
    };
  });
}

/** How to pay: the SEPA account when there is one, and the terms (BR-CO-25). */
function paymentOf(source: EinvoiceSource): Pick<EinvoiceDocument, 'payee' | 'paymentTerms'> {
  const payee = source.payee;
  return {
    payee:
      payee === null
        ? null
        : {
            paymentId: source.number,
            iban: payee.iban,
            holder: payee.holder === '' ? null : payee.holder,
            bic: payee.bic === '' ? null : payee.bic,
          },
    // A credit note has no due date: its terms say what it is.
    paymentTerms:
      source.kind === 'credit_note'
        ? `Credit note${source.corrects === null ? '' : ` for invoice ${source.corrects.number}`}.`
        : `Payable by ${source.due_on}.`,
  };
}

/**
 * The e-invoice of a document. Call `einvoiceGaps` first: this assumes nothing is missing. The
 * document's own totals are not copied: they are derived here from the lines by the domain's
 * rules at two decimals (the same figures for every currency with at most two).
 */
export function einvoiceDocument(source: EinvoiceSource, codes: EinvoiceCodes): EinvoiceDocument {
  const exponent = einvoiceExponent(source.currency);
  const lines = categorizedLines(source, exponent);
  const totals = totalsOf(
    lines.map((line) => line.priced),
    source.prices_include_tax,
    exponent,
  );
  const groupNets = new Map(totals.breakdown.map((group) => [groupKeyOf(group), group.net as bigint]));
  const nets = lineNets(lines, source.prices_include_tax, exponent, groupNets);
  const notSubject = lines.some((line) => line.category === 'O');
  return {
    typeCode: source.kind === 'credit_note' ? '381' : '380',
    number: source.number,
    issuedOn: source.issued_on,
    dueOn: source.kind === 'invoice' ? source.due_on : null,
    note: present(source.notes),
    currency: source.currency,
    orderReference: present(source.purchase_order),
    corrects:
      source.corrects === null
        ? null
        : { number: source.corrects.number, issuedOn: source.corrects.issued_on },
    seller: sellerOf(source, notSubject),
    buyer: buyerOf(source, notSubject, codes),
    // BR-IC-12: an intra-community supply names the country it went to (the buyer's).
    delivery:
      source.delivered_on === null ? null : { date: source.delivered_on, country: buyerCountry(source) },
    ...paymentOf(source),
    taxTotal: fixed(totals.taxTotal),
    breakdown: breakdownOf(totals, source),
    // Nothing prepaid, no allowances or charges: the total is due.
    totals: {
      lines: fixed(totals.subtotal),
      taxExclusive: fixed(totals.subtotal),
      taxInclusive: fixed(totals.total),
      payable: fixed(totals.total),
    },
    lines: documentLines(lines, nets, source, codes),
  };
}
