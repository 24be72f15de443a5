import { createRequire } from 'node:module';
import type { Invoice } from '@e-invoice-eu/core';
import type { ValidateFunction } from 'ajv/dist/2019.js';
import {
  type EinvoiceAddress,
  type EinvoiceDocument,
  type EinvoiceTaxCategory,
  PEPPOL_CUSTOMIZATION_ID,
  PEPPOL_PROFILE_ID,
} from '../src/features/invoices/einvoice.ts';
import type { EinvoiceSyntax } from '../src/features/invoices/einvoice-render.ts';

// @e-invoice-eu/core as a test oracle: the same e-invoice (an EinvoiceDocument) handed to the
// library in its UBL-shaped JSON, and written by its UBL and CII writers; its JSON schema checks
// the data. A differential test compares our XML with the library's, element by element, after
// both are parsed (`canonicalXml`).

const require = createRequire(import.meta.url);

const TAX_SCHEME = { 'cbc:ID': 'VAT' } as const;

function taxCategory(category: EinvoiceTaxCategory) {
  return {
    'cbc:ID': category.code,
    ...(category.percent === null ? {} : { 'cbc:Percent': category.percent }),
    'cac:TaxScheme': TAX_SCHEME,
  };
}

const when = <T extends object>(condition: boolean, value: () => T): T | object => (condition ? value() : {});

function postalAddress(address: EinvoiceAddress) {
  const text = (key: string, value: string | null) => (value === null ? {} : { [key]: value });
  return {
    ...text('cbc:StreetName', address.line1),
    ...text('cbc:AdditionalStreetName', address.line2),
    ...text('cbc:CityName', address.city),
    ...text('cbc:PostalZone', address.postalCode),
    ...text('cbc:CountrySubentity', address.region),
    ...when(address.line3 !== null, () => ({ 'cac:AddressLine': { 'cbc:Line': address.line3 } })),
    'cac:Country': { 'cbc:IdentificationCode': address.country },
  };
}

function supplierParty(seller: EinvoiceDocument['seller']) {
  const schemes = [
    ...(seller.vatId === null ? [] : [{ 'cbc:CompanyID': seller.vatId, 'cac:TaxScheme': TAX_SCHEME }]),
    ...(seller.taxNumber === null
      ? []
      : [{ 'cbc:CompanyID': seller.taxNumber, 'cac:TaxScheme': { 'cbc:ID': 'FC' } }]),
  ];
  const contact = {
    ...(seller.phone === null ? {} : { 'cbc:Telephone': seller.phone }),
    ...(seller.email === null ? {} : { 'cbc:ElectronicMail': seller.email }),
  };
  return {
    'cac:Party': {
      ...when(seller.endpoint !== null, () => ({
        'cbc:EndpointID': seller.endpoint,
        'cbc:EndpointID@schemeID': 'EM',
      })),
      ...when(seller.tradingName !== null, () => ({ 'cac:PartyName': { 'cbc:Name': seller.tradingName } })),
      'cac:PostalAddress': postalAddress(seller.address),
      ...when(schemes.length > 0, () => ({ 'cac:PartyTaxScheme': schemes })),
      'cac:PartyLegalEntity': {
        'cbc:RegistrationName': seller.legalName,
        ...when(seller.registrationId !== null, () => ({ 'cbc:CompanyID': seller.registrationId })),
      },
      ...when(Object.keys(contact).length > 0, () => ({ 'cac:Contact': contact })),
    },
  };
}

function customerParty(buyer: EinvoiceDocument['buyer']) {
  return {
    'cac:Party': {
      ...when(buyer.endpoint !== null, () => ({
        'cbc:EndpointID': buyer.endpoint,
        'cbc:EndpointID@schemeID': 'EM',
      })),
      'cac:PostalAddress': postalAddress(buyer.address),
      ...when(buyer.vatId !== null, () => ({
        'cac:PartyTaxScheme': { 'cbc:CompanyID': buyer.vatId, 'cac:TaxScheme': TAX_SCHEME },
      })),
      'cac:PartyLegalEntity': {
        'cbc:RegistrationName': buyer.legalName,
        ...when(buyer.registrationId !== null, () => ({ 'cbc:CompanyID': buyer.registrationId })),
      },
      ...when(buyer.email !== null, () => ({ 'cac:Contact': { 'cbc:ElectronicMail': buyer.email } })),
    },
  };
}

function payment(doc: EinvoiceDocument) {
  const payee = doc.payee;
  return {
    ...when(payee !== null, () => ({
      'cac:PaymentMeans': [
        {
          'cbc:PaymentMeansCode': '58',
          'cbc:PaymentID': payee?.paymentId,
          'cac:PayeeFinancialAccount': {
            'cbc:ID': payee?.iban,
            ...when(payee?.holder != null, () => ({ 'cbc:Name': payee?.holder })),
            ...when(payee?.bic != null, () => ({
              'cac:FinancialInstitutionBranch': { 'cbc:ID': payee?.bic },
            })),
          },
        },
      ],
    })),
    'cac:PaymentTerms': { 'cbc:Note': doc.paymentTerms },
  };
}

function amounts(doc: EinvoiceDocument) {
  const currency = doc.currency;
  return {
    'cac:TaxTotal': [
      {
        'cbc:TaxAmount': doc.taxTotal,
        'cbc:TaxAmount@currencyID': currency,
        'cac:TaxSubtotal': doc.breakdown.map((group) => ({
          'cbc:TaxableAmount': group.taxable,
          'cbc:TaxableAmount@currencyID': currency,
          'cbc:TaxAmount': group.tax,
          'cbc:TaxAmount@currencyID': currency,
          'cac:TaxCategory': {
            ...taxCategory(group.category),
            ...when(group.exemptionCode !== null, () => ({
              'cbc:TaxExemptionReasonCode': group.exemptionCode,
            })),
            ...when(group.exemptionReason !== null, () => ({
              'cbc:TaxExemptionReason': group.exemptionReason,
            })),
          },
        })),
      },
    ],
    'cac:LegalMonetaryTotal': {
      'cbc:LineExtensionAmount': doc.totals.lines,
      'cbc:LineExtensionAmount@currencyID': currency,
      'cbc:TaxExclusiveAmount': doc.totals.taxExclusive,
      'cbc:TaxExclusiveAmount@currencyID': currency,
      'cbc:TaxInclusiveAmount': doc.totals.taxInclusive,
      'cbc:TaxInclusiveAmount@currencyID': currency,
      'cbc:PayableAmount': doc.totals.payable,
      'cbc:PayableAmount@currencyID': currency,
    },
  };
}

function lines(doc: EinvoiceDocument) {
  return doc.lines.map((line) => ({
    'cbc:ID': line.id,
    ...when(line.note !== null, () => ({ 'cbc:Note': line.note })),
    'cbc:InvoicedQuantity': line.quantity,
    'cbc:InvoicedQuantity@unitCode': line.unitCode,
    'cbc:LineExtensionAmount': line.net,
    'cbc:LineExtensionAmount@currencyID': doc.currency,
    'cac:Item': { 'cbc:Name': line.name, 'cac:ClassifiedTaxCategory': taxCategory(line.tax) },
    'cac:Price': {
      'cbc:PriceAmount': line.price,
      'cbc:PriceAmount@currencyID': doc.currency,
      ...when(line.baseQuantity !== null, () => ({
        'cbc:BaseQuantity': line.baseQuantity,
        'cbc:BaseQuantity@unitCode': line.unitCode,
      })),
    },
  }));
}

/** The e-invoice in the library's UBL-shaped JSON (its type 381 becomes a UBL CreditNote). */
export function libraryInvoice(doc: EinvoiceDocument): Invoice {
  const invoice = {
    'cbc:CustomizationID': PEPPOL_CUSTOMIZATION_ID,
    'cbc:ProfileID': PEPPOL_PROFILE_ID,
    'cbc:ID': doc.number,
    'cbc:IssueDate': doc.issuedOn,
    ...when(doc.dueOn !== null, () => ({ 'cbc:DueDate': doc.dueOn })),
    'cbc:InvoiceTypeCode': doc.typeCode,
    ...when(doc.note !== null, () => ({ 'cbc:Note': [doc.note] })),
    'cbc:DocumentCurrencyCode': doc.currency,
    ...when(doc.orderReference !== null, () => ({
      'cbc:BuyerReference': doc.orderReference,
      'cac:OrderReference': { 'cbc:ID': doc.orderReference },
    })),
    ...when(doc.corrects !== null, () => ({
      'cac:BillingReference': [
        {
          'cac:InvoiceDocumentReference': {
            'cbc:ID': doc.corrects?.number,
            'cbc:IssueDate': doc.corrects?.issuedOn,
          },
        },
      ],
    })),
    'cac:AccountingSupplierParty': supplierParty(doc.seller),
    'cac:AccountingCustomerParty': customerParty(doc.buyer),
    ...when(doc.delivery !== null, () => ({
      'cac:Delivery': {
        'cbc:ActualDeliveryDate': doc.delivery?.date,
        'cac:DeliveryLocation': {
          'cac:Address': { 'cac:Country': { 'cbc:IdentificationCode': doc.delivery?.country } },
        },
      },
    })),
    ...payment(doc),
    ...amounts(doc),
    'cac:InvoiceLine': lines(doc),
  };
  // The library's Invoice type spells every optional UBL element; this one has what EN 16931 needs.
  return { 'ubl:Invoice': invoice } as unknown as Invoice;
}

const LIBRARY_FORMAT: Readonly<Record<EinvoiceSyntax, string>> = { cii: 'CII', ubl: 'UBL' };
const silent = { log: () => {}, warn: () => {}, error: () => {} };

type Library = typeof import('@e-invoice-eu/core');
let library: Promise<Library> | undefined;
const loadLibrary = () => {
  library ??= import('@e-invoice-eu/core');
  return library;
};

/** The library's XML for an e-invoice, written as its own entry writes after its schema check. */
export async function libraryXml(syntax: EinvoiceSyntax, doc: EinvoiceDocument): Promise<string> {
  const core = await loadLibrary();
  const factory = new core.FormatFactoryService();
  const writer = factory.createFormatService(LIBRARY_FORMAT[syntax], silent);
  const invoice = libraryInvoice(doc);
  writer.fillInvoiceDefaults(invoice);
  const written = await writer.generate(invoice, {
    format: factory.normalizeFormat(LIBRARY_FORMAT[syntax]),
    lang: 'en',
  });
  return typeof written === 'string' ? written : Buffer.from(written).toString('utf8');
}

const checks = new Map<EinvoiceSyntax, Promise<ValidateFunction<Invoice>>>();

async function compileCheck(syntax: EinvoiceSyntax): Promise<ValidateFunction<Invoice>> {
  const [core, { Ajv2019 }] = await Promise.all([loadLibrary(), import('ajv/dist/2019.js')]);
  const schema = structuredClone(core.invoiceSchema);
  new core.FormatFactoryService().createFormatService(LIBRARY_FORMAT[syntax], silent).patchSchema(schema);
  return new Ajv2019({ strict: true, allErrors: true, useDefaults: true }).compile(schema);
}

/** What the library's JSON schema (as the syntax's writer patches it) finds wrong in the data. */
export async function librarySchemaProblems(
  syntax: EinvoiceSyntax,
  doc: EinvoiceDocument,
): Promise<unknown[]> {
  let check = checks.get(syntax);
  if (check === undefined) {
    check = compileCheck(syntax);
    checks.set(syntax, check);
  }
  const validate = await check;
  return validate(libraryInvoice(doc)) ? [] : [...(validate.errors ?? [])];
}

type SaxonXPath = {
  getResource(options: { text: string; type: 'xml' }): Promise<unknown>;
  XPath: { evaluate(xpath: string, context: unknown, options?: { resultForm: 'array' }): unknown };
};
const saxon = require('saxon-js') as SaxonXPath;

/**
 * A document as its parser reads it, one entry a leaf element or attribute in document order:
 * the path by namespace URI and position (`/Q{urn…}Invoice[1]/Q{urn…}ID[1]`), `=`, the value.
 * Prefixes, namespace declarations, indentation and how a character was escaped do not show.
 */
export async function xmlEntries(xml: string): Promise<string[]> {
  const parsed = await saxon.getResource({ text: xml, type: 'xml' });
  return saxon.XPath.evaluate("(//*[not(*)] | //@*) ! (path(.) || '=' || string(.))", parsed, {
    resultForm: 'array',
  }) as string[];
}

/**
 * The entries of a document for comparing ours with the library's: a carriage return reads as a
 * newline, as an unescaped one (the library's) does.
 */
export async function canonicalXml(xml: string): Promise<string[]> {
  return (await xmlEntries(xml)).map((entry) => entry.replace(/\r\n?/g, '\n'));
}
