import {
  type EinvoiceAddress,
  type EinvoiceDocument,
  type EinvoiceTaxCategory,
  PEPPOL_CUSTOMIZATION_ID,
  PEPPOL_PROFILE_ID,
} from './einvoice.ts';
import { XmlWriter } from './xml-writer.ts';

// An e-invoice as UBL 2.1 with the Peppol BIS Billing 3.0 customization: an Invoice, or a
// CreditNote for type 381. Each function writes its element's children in the sequence the UBL
// 2.1 schema gives them (UBL-Invoice-2.1.xsd, UBL-CreditNote-2.1.xsd and the common aggregate
// components), so the document is in schema order as it is written. Only what the document says
// is written: the values and the choices are einvoiceDocument's.

const NAMESPACES = {
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
};

/** What differs between the two document types: the root, the type code's name, the lines'. */
const SHAPES = {
  '380': {
    root: 'Invoice',
    namespace: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
    typeCode: 'cbc:InvoiceTypeCode',
    line: 'cac:InvoiceLine',
    quantity: 'cbc:InvoicedQuantity',
  },
  '381': {
    root: 'CreditNote',
    namespace: 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2',
    typeCode: 'cbc:CreditNoteTypeCode',
    line: 'cac:CreditNoteLine',
    quantity: 'cbc:CreditedQuantity',
  },
} as const;

type Shape = (typeof SHAPES)[keyof typeof SHAPES];

function taxScheme(xml: XmlWriter, id: string) {
  xml.element('cac:TaxScheme', () => xml.leaf('cbc:ID', id));
}

/** A TaxCategory or ClassifiedTaxCategory: ID, Percent, the exemption, TaxScheme. */
function taxCategory(
  xml: XmlWriter,
  name: string,
  category: EinvoiceTaxCategory,
  exemption?: { code: string | null; reason: string | null },
) {
  xml.element(name, () => {
    xml.leaf('cbc:ID', category.code);
    xml.optionalLeaf('cbc:Percent', category.percent);
    xml.optionalLeaf('cbc:TaxExemptionReasonCode', exemption?.code ?? null);
    xml.optionalLeaf('cbc:TaxExemptionReason', exemption?.reason ?? null);
    taxScheme(xml, 'VAT');
  });
}

function postalAddress(xml: XmlWriter, address: EinvoiceAddress) {
  xml.element('cac:PostalAddress', () => {
    xml.optionalLeaf('cbc:StreetName', address.line1);
    xml.optionalLeaf('cbc:AdditionalStreetName', address.line2);
    xml.optionalLeaf('cbc:CityName', address.city);
    xml.optionalLeaf('cbc:PostalZone', address.postalCode);
    xml.optionalLeaf('cbc:CountrySubentity', address.region);
    if (address.line3 !== null)
      xml.element('cac:AddressLine', () => xml.leaf('cbc:Line', address.line3 ?? ''));
    xml.element('cac:Country', () => xml.leaf('cbc:IdentificationCode', address.country));
  });
}

function partyTaxScheme(xml: XmlWriter, companyId: string, scheme: string) {
  xml.element('cac:PartyTaxScheme', () => {
    xml.leaf('cbc:CompanyID', companyId);
    taxScheme(xml, scheme);
  });
}

function legalEntity(xml: XmlWriter, name: string, companyId: string | null) {
  xml.element('cac:PartyLegalEntity', () => {
    xml.leaf('cbc:RegistrationName', name);
    xml.optionalLeaf('cbc:CompanyID', companyId);
  });
}

function endpoint(xml: XmlWriter, address: string | null) {
  if (address !== null) xml.leaf('cbc:EndpointID', address, { schemeID: 'EM' });
}

function supplier(xml: XmlWriter, seller: EinvoiceDocument['seller']) {
  xml.element('cac:AccountingSupplierParty', () =>
    xml.element('cac:Party', () => {
      endpoint(xml, seller.endpoint);
      if (seller.tradingName !== null)
        xml.element('cac:PartyName', () => xml.leaf('cbc:Name', seller.tradingName ?? ''));
      postalAddress(xml, seller.address);
      if (seller.vatId !== null) partyTaxScheme(xml, seller.vatId, 'VAT');
      if (seller.taxNumber !== null) partyTaxScheme(xml, seller.taxNumber, 'FC');
      legalEntity(xml, seller.legalName, seller.registrationId);
      if (seller.phone !== null || seller.email !== null)
        xml.element('cac:Contact', () => {
          xml.optionalLeaf('cbc:Telephone', seller.phone);
          xml.optionalLeaf('cbc:ElectronicMail', seller.email);
        });
    }),
  );
}

function customer(xml: XmlWriter, buyer: EinvoiceDocument['buyer']) {
  xml.element('cac:AccountingCustomerParty', () =>
    xml.element('cac:Party', () => {
      endpoint(xml, buyer.endpoint);
      postalAddress(xml, buyer.address);
      if (buyer.vatId !== null) partyTaxScheme(xml, buyer.vatId, 'VAT');
      legalEntity(xml, buyer.legalName, buyer.registrationId);
      if (buyer.email !== null)
        xml.element('cac:Contact', () => xml.leaf('cbc:ElectronicMail', buyer.email ?? ''));
    }),
  );
}

/** Delivery, PaymentMeans and PaymentTerms, in that order. */
function deliveryAndPayment(xml: XmlWriter, doc: EinvoiceDocument) {
  const delivery = doc.delivery;
  if (delivery !== null)
    xml.element('cac:Delivery', () => {
      xml.leaf('cbc:ActualDeliveryDate', delivery.date);
      xml.element('cac:DeliveryLocation', () =>
        xml.element('cac:Address', () =>
          xml.element('cac:Country', () => xml.leaf('cbc:IdentificationCode', delivery.country)),
        ),
      );
    });
  const payee = doc.payee;
  if (payee !== null)
    xml.element('cac:PaymentMeans', () => {
      xml.leaf('cbc:PaymentMeansCode', '58');
      xml.leaf('cbc:PaymentID', payee.paymentId);
      xml.element('cac:PayeeFinancialAccount', () => {
        xml.leaf('cbc:ID', payee.iban);
        xml.optionalLeaf('cbc:Name', payee.holder);
        if (payee.bic !== null)
          xml.element('cac:FinancialInstitutionBranch', () => xml.leaf('cbc:ID', payee.bic ?? ''));
      });
    });
  xml.element('cac:PaymentTerms', () => xml.leaf('cbc:Note', doc.paymentTerms));
}

function taxTotal(xml: XmlWriter, doc: EinvoiceDocument) {
  const currency = { currencyID: doc.currency };
  xml.element('cac:TaxTotal', () => {
    xml.leaf('cbc:TaxAmount', doc.taxTotal, currency);
    for (const group of doc.breakdown)
      xml.element('cac:TaxSubtotal', () => {
        xml.leaf('cbc:TaxableAmount', group.taxable, currency);
        xml.leaf('cbc:TaxAmount', group.tax, currency);
        taxCategory(xml, 'cac:TaxCategory', group.category, {
          code: group.exemptionCode,
          reason: group.exemptionReason,
        });
      });
  });
  xml.element('cac:LegalMonetaryTotal', () => {
    xml.leaf('cbc:LineExtensionAmount', doc.totals.lines, currency);
    xml.leaf('cbc:TaxExclusiveAmount', doc.totals.taxExclusive, currency);
    xml.leaf('cbc:TaxInclusiveAmount', doc.totals.taxInclusive, currency);
    xml.leaf('cbc:PayableAmount', doc.totals.payable, currency);
  });
}

function lines(xml: XmlWriter, doc: EinvoiceDocument, shape: Shape) {
  const currency = { currencyID: doc.currency };
  for (const line of doc.lines) {
    const unit = { unitCode: line.unitCode };
    xml.element(shape.line, () => {
      xml.leaf('cbc:ID', line.id);
      xml.optionalLeaf('cbc:Note', line.note);
      xml.leaf(shape.quantity, line.quantity, unit);
      xml.leaf('cbc:LineExtensionAmount', line.net, currency);
      xml.element('cac:Item', () => {
        xml.leaf('cbc:Name', line.name);
        taxCategory(xml, 'cac:ClassifiedTaxCategory', line.tax);
      });
      xml.element('cac:Price', () => {
        xml.leaf('cbc:PriceAmount', line.price, currency);
        xml.optionalLeaf('cbc:BaseQuantity', line.baseQuantity, unit);
      });
    });
  }
}

/** The UBL document of an e-invoice. */
export function ublXml(doc: EinvoiceDocument): string {
  const shape = SHAPES[doc.typeCode];
  const xml = new XmlWriter();
  const root = { xmlns: shape.namespace, 'xmlns:cac': NAMESPACES.cac, 'xmlns:cbc': NAMESPACES.cbc };
  xml.element(shape.root, root, () => {
    xml.leaf('cbc:CustomizationID', PEPPOL_CUSTOMIZATION_ID);
    xml.leaf('cbc:ProfileID', PEPPOL_PROFILE_ID);
    xml.leaf('cbc:ID', doc.number);
    xml.leaf('cbc:IssueDate', doc.issuedOn);
    xml.optionalLeaf('cbc:DueDate', doc.dueOn);
    xml.leaf(shape.typeCode, doc.typeCode);
    xml.optionalLeaf('cbc:Note', doc.note);
    xml.leaf('cbc:DocumentCurrencyCode', doc.currency);
    xml.optionalLeaf('cbc:BuyerReference', doc.orderReference);
    if (doc.orderReference !== null)
      xml.element('cac:OrderReference', () => xml.leaf('cbc:ID', doc.orderReference ?? ''));
    const corrects = doc.corrects;
    if (corrects !== null)
      xml.element('cac:BillingReference', () =>
        xml.element('cac:InvoiceDocumentReference', () => {
          xml.leaf('cbc:ID', corrects.number);
          xml.leaf('cbc:IssueDate', corrects.issuedOn);
        }),
      );
    supplier(xml, doc.seller);
    customer(xml, doc.buyer);
    deliveryAndPayment(xml, doc);
    taxTotal(xml, doc);
    lines(xml, doc, shape);
  });
  return xml.toString();
}
