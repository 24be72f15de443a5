import type { Invoice } from '@e-invoice-eu/core';
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
// e-invoice data out (the UBL-shaped JSON of @e-invoice-eu/core, which writes it as UBL or CII).
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
  // The writer takes rates with at most four decimals.
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

const TAX_SCHEME = { 'cbc:ID': 'VAT' } as const;

function taxCategory(category: VatCategory, rate: TaxRateE8) {
  return {
    'cbc:ID': category,
    // BR-O-05: a line not subject to VAT has no rate.
    ...(category === 'O' ? {} : { 'cbc:Percent': formatRate(rate) }),
    'cac:TaxScheme': TAX_SCHEME,
  };
}

const ONE = 10n ** BigInt(SCALE);

/**
 * A price as two decimals for a base quantity (BT-149), the writer's limit: 99.995 per unit is
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
function invoiceLines(lines: Line[], nets: bigint[], source: EinvoiceSource, codes: EinvoiceCodes) {
  const currency = source.currency;
  return lines.map((line, index) => {
    const net = nets[index] ?? 0n;
    const unit = unitCodeOf(line.item.unit, codes);
    const negativePrice = line.priced.unitPrice < 0n;
    const quantity = formatAmountTrimmed(
      asAmount(negativePrice ? -line.priced.quantity : line.priced.quantity),
    );
    // BR-27: the item's net price is never negative; a discount line counts negative units.
    const price = source.prices_include_tax
      ? { amount: net < 0n ? -net : net, base: line.priced.quantity }
      : twoDecimalPrice(negativePrice ? -line.priced.unitPrice : line.priced.unitPrice);
    const priceParts = {
      'cbc:PriceAmount': fixed(price.amount),
      ...(price.base === null ? {} : { 'cbc:BaseQuantity': formatAmountTrimmed(asAmount(price.base)) }),
    };
    return {
      'cbc:ID': String(index + 1),
      ...(unit.word === null ? {} : { 'cbc:Note': `Unit: ${unit.word}` }),
      'cbc:InvoicedQuantity': quantity,
      'cbc:InvoicedQuantity@unitCode': unit.code,
      'cbc:LineExtensionAmount': fixed(net),
      'cbc:LineExtensionAmount@currencyID': currency,
      'cac:Item': {
        'cbc:Name': line.item.description,
        'cac:ClassifiedTaxCategory': taxCategory(line.category, line.priced.taxRate),
      },
      'cac:Price': {
        ...priceParts,
        'cbc:PriceAmount@currencyID': currency,
        ...(price.base === null ? {} : { 'cbc:BaseQuantity@unitCode': unit.code }),
      },
    };
  });
}

function postalAddress(lines: {
  line1: string;
  line2: string;
  line3?: string;
  postal: string;
  city: string;
  region: string;
  country: string;
}) {
  const text = (key: string, value: string | undefined) =>
    value && value.trim() !== '' ? { [key]: value.trim() } : {};
  return {
    ...text('cbc:StreetName', lines.line1),
    ...text('cbc:AdditionalStreetName', lines.line2),
    ...text('cbc:CityName', lines.city),
    ...text('cbc:PostalZone', lines.postal),
    ...text('cbc:CountrySubentity', lines.region),
    ...(lines.line3 && lines.line3.trim() !== ''
      ? { 'cac:AddressLine': { 'cbc:Line': lines.line3.trim() } }
      : {}),
    'cac:Country': { 'cbc:IdentificationCode': lines.country },
  };
}

function supplierParty(source: EinvoiceSource, notSubject: boolean) {
  const seller = source.seller;
  const taxSchemes = [
    // BR-O-02: a document not subject to VAT names no seller VAT ID.
    ...(seller.vat_id.trim() !== '' && !notSubject
      ? [{ 'cbc:CompanyID': seller.vat_id.trim(), 'cac:TaxScheme': TAX_SCHEME }]
      : []),
    ...(seller.tax_number.trim() !== ''
      ? [{ 'cbc:CompanyID': seller.tax_number.trim(), 'cac:TaxScheme': { 'cbc:ID': 'FC' } }]
      : []),
  ];
  const contact = {
    ...(seller.phone.trim() !== '' ? { 'cbc:Telephone': seller.phone.trim() } : {}),
    ...(seller.email.trim() !== '' ? { 'cbc:ElectronicMail': seller.email.trim() } : {}),
  };
  return {
    'cac:Party': {
      ...(seller.email.trim() !== ''
        ? { 'cbc:EndpointID': seller.email.trim(), 'cbc:EndpointID@schemeID': 'EM' }
        : {}),
      ...(seller.name.trim() !== '' && seller.name !== seller.legal_name
        ? { 'cac:PartyName': { 'cbc:Name': seller.name.trim() } }
        : {}),
      'cac:PostalAddress': postalAddress({
        line1: seller.address.line1,
        line2: seller.address.line2,
        postal: seller.address.postal_code,
        city: seller.address.city,
        region: seller.address.region,
        country: seller.address.country.toUpperCase(),
      }),
      ...(taxSchemes.length > 0 ? { 'cac:PartyTaxScheme': taxSchemes } : {}),
      'cac:PartyLegalEntity': {
        'cbc:RegistrationName': seller.legal_name.trim(),
        ...(seller.registration_id.trim() !== '' ? { 'cbc:CompanyID': seller.registration_id.trim() } : {}),
      },
      ...(Object.keys(contact).length > 0 ? { 'cac:Contact': contact } : {}),
    },
  };
}

function customerParty(source: EinvoiceSource, notSubject: boolean, codes: EinvoiceCodes) {
  const client = source.client;
  const [line1 = '', line2 = '', ...rest] = client.address
    .split(/\r?\n|,\s*/)
    .map((part) => part.trim())
    .filter((part) => part !== '');
  const vatId = client.tax_id.trim();
  return {
    'cac:Party': {
      ...(client.email.trim() !== ''
        ? { 'cbc:EndpointID': client.email.trim(), 'cbc:EndpointID@schemeID': 'EM' }
        : {}),
      'cac:PostalAddress': postalAddress({
        line1,
        line2,
        line3: rest.join(', '),
        postal: '',
        city: '',
        region: '',
        country: buyerCountry(source),
      }),
      ...(isVatId(vatId, codes) && !notSubject
        ? { 'cac:PartyTaxScheme': { 'cbc:CompanyID': vatId, 'cac:TaxScheme': TAX_SCHEME } }
        : {}),
      'cac:PartyLegalEntity': {
        'cbc:RegistrationName': client.name.trim(),
        ...(client.reg_number.trim() !== '' ? { 'cbc:CompanyID': client.reg_number.trim() } : {}),
      },
      ...(client.email.trim() !== '' ? { 'cac:Contact': { 'cbc:ElectronicMail': client.email.trim() } } : {}),
    },
  };
}

/** Customization and profile of Peppol BIS Billing 3.0 (the UBL the European networks carry). */
export const PEPPOL_CUSTOMIZATION_ID =
  'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0';
export const PEPPOL_PROFILE_ID = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';

/** The VAT breakdown (BG-23): one per category and rate, with why no VAT is charged. */
function taxTotal(totals: Totals, source: EinvoiceSource) {
  const currency = source.currency;
  const subtotals = totals.breakdown.map((group) => {
    const category = vatCategoryOf(group.taxKind, group.taxRate);
    const standard = EXEMPTION[category];
    const exemption =
      category === 'E'
        ? { 'cbc:TaxExemptionReason': (source.tax_exempt_reason ?? '').trim() }
        : standard === undefined
          ? {}
          : { 'cbc:TaxExemptionReasonCode': standard.code, 'cbc:TaxExemptionReason': standard.text };
    return {
      'cbc:TaxableAmount': fixed(group.net),
      'cbc:TaxableAmount@currencyID': currency,
      'cbc:TaxAmount': fixed(group.tax),
      'cbc:TaxAmount@currencyID': currency,
      'cac:TaxCategory': { ...taxCategory(category, group.taxRate), ...exemption },
    };
  });
  return [
    {
      'cbc:TaxAmount': fixed(totals.taxTotal),
      'cbc:TaxAmount@currencyID': currency,
      'cac:TaxSubtotal': subtotals,
    },
  ];
}

/** The document totals (BG-22): nothing prepaid, no allowances or charges, the total is due. */
function monetaryTotal(totals: Totals, currency: string) {
  return {
    'cbc:LineExtensionAmount': fixed(totals.subtotal),
    'cbc:LineExtensionAmount@currencyID': currency,
    'cbc:TaxExclusiveAmount': fixed(totals.subtotal),
    'cbc:TaxExclusiveAmount@currencyID': currency,
    'cbc:TaxInclusiveAmount': fixed(totals.total),
    'cbc:TaxInclusiveAmount@currencyID': currency,
    'cbc:PayableAmount': fixed(totals.total),
    'cbc:PayableAmount@currencyID': currency,
  };
}

/** The references: purchase order, the invoice a credit note corrects, the delivery. */
function references(source: EinvoiceSource) {
  const order = source.purchase_order.trim();
  return {
    ...(order === '' ? {} : { 'cbc:BuyerReference': order, 'cac:OrderReference': { 'cbc:ID': order } }),
    ...(source.corrects === null
      ? {}
      : {
          'cac:BillingReference': [
            {
              'cac:InvoiceDocumentReference': {
                'cbc:ID': source.corrects.number,
                'cbc:IssueDate': source.corrects.issued_on,
              },
            },
          ],
        }),
  };
}

function delivery(source: EinvoiceSource) {
  if (source.delivered_on === null) return {};
  // BR-IC-12: an intra-community supply names the country it went to (the buyer's).
  const country = { 'cac:Country': { 'cbc:IdentificationCode': buyerCountry(source) } };
  return {
    'cac:Delivery': {
      'cbc:ActualDeliveryDate': source.delivered_on,
      'cac:DeliveryLocation': { 'cac:Address': country },
    },
  };
}

/** How to pay: the SEPA account when there is one, and the terms (BR-CO-25). */
function payment(source: EinvoiceSource) {
  const payee = source.payee;
  const means =
    payee === null
      ? {}
      : {
          'cac:PaymentMeans': [
            {
              'cbc:PaymentMeansCode': '58',
              'cbc:PaymentID': source.number,
              'cac:PayeeFinancialAccount': {
                'cbc:ID': payee.iban,
                ...(payee.holder !== '' ? { 'cbc:Name': payee.holder } : {}),
                ...(payee.bic !== '' ? { 'cac:FinancialInstitutionBranch': { 'cbc:ID': payee.bic } } : {}),
              },
            },
          ],
        };
  // A credit note has no due date in UBL: its terms say what it is.
  const terms =
    source.kind === 'credit_note'
      ? `Credit note${source.corrects === null ? '' : ` for invoice ${source.corrects.number}`}.`
      : `Payable by ${source.due_on}.`;
  return { ...means, 'cac:PaymentTerms': { 'cbc:Note': terms } };
}

/**
 * The e-invoice data of a document. Call `einvoiceGaps` first: this assumes nothing is missing.
 * The document's own totals are not copied: they are derived here from the lines by the domain's
 * rules at two decimals (the same figures for every currency with at most two).
 */
export function einvoiceData(source: EinvoiceSource, codes: EinvoiceCodes): Invoice {
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
  const invoice = {
    'cbc:CustomizationID': PEPPOL_CUSTOMIZATION_ID,
    'cbc:ProfileID': PEPPOL_PROFILE_ID,
    'cbc:ID': source.number,
    'cbc:IssueDate': source.issued_on,
    ...(source.kind === 'invoice' ? { 'cbc:DueDate': source.due_on } : {}),
    'cbc:InvoiceTypeCode': source.kind === 'credit_note' ? '381' : '380',
    ...(source.notes.trim() !== '' ? { 'cbc:Note': [source.notes.trim()] } : {}),
    'cbc:DocumentCurrencyCode': source.currency,
    ...references(source),
    'cac:AccountingSupplierParty': supplierParty(source, notSubject),
    'cac:AccountingCustomerParty': customerParty(source, notSubject, codes),
    ...delivery(source),
    ...payment(source),
    'cac:TaxTotal': taxTotal(totals, source),
    'cac:LegalMonetaryTotal': monetaryTotal(totals, source.currency),
    'cac:InvoiceLine': invoiceLines(lines, nets, source, codes),
  };
  // The library's Invoice type spells every optional UBL element; the document is built from the
  // elements EN 16931 needs and checked against the library's schema in the property test.
  return { 'ubl:Invoice': invoice } as unknown as Invoice;
}
