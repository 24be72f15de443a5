import {
  type EinvoiceAddress,
  type EinvoiceDocument,
  type EinvoiceTaxCategory,
  EN16931_SPECIFICATION_ID,
} from './einvoice.ts';
import { type XmlAttributes, XmlWriter } from './xml-writer.ts';

// An e-invoice as UN/CEFACT CII (Cross Industry Invoice D16B), the XML a Factur-X of profile
// EN 16931 carries. Each function writes its element's children in the sequence the CII schema
// gives them (CrossIndustryInvoice_100pD16B.xsd and its reusable aggregates), so the document is
// in schema order as it is written. Only what the document says is written: the values and the
// choices are einvoiceDocument's.

const NAMESPACES = {
  'xmlns:rsm': 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100',
  'xmlns:ram': 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100',
  'xmlns:qdt': 'urn:un:unece:uncefact:data:standard:QualifiedDataType:100',
  'xmlns:udt': 'urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100',
};

/** CII writes a date as YYYYMMDD (format 102). */
const FORMAT_102 = { format: '102' } as const;
const compactDate = (date: string) => date.replaceAll('-', '');

function dateTime(xml: XmlWriter, name: string, date: string, kind: 'udt' | 'qdt' = 'udt') {
  xml.element(name, () => xml.leaf(`${kind}:DateTimeString`, compactDate(date), FORMAT_102));
}

/** An ApplicableTradeTax: CalculatedAmount, TypeCode, ExemptionReason, BasisAmount, CategoryCode, ExemptionReasonCode, RateApplicablePercent. */
function tradeTax(
  xml: XmlWriter,
  category: EinvoiceTaxCategory,
  amounts?: { tax: string; basis: string; exemptionCode: string | null; exemptionReason: string | null },
) {
  xml.element('ram:ApplicableTradeTax', () => {
    if (amounts !== undefined) xml.leaf('ram:CalculatedAmount', amounts.tax);
    xml.leaf('ram:TypeCode', 'VAT');
    xml.optionalLeaf('ram:ExemptionReason', amounts?.exemptionReason ?? null);
    if (amounts !== undefined) xml.leaf('ram:BasisAmount', amounts.basis);
    xml.leaf('ram:CategoryCode', category.code);
    xml.optionalLeaf('ram:ExemptionReasonCode', amounts?.exemptionCode ?? null);
    xml.optionalLeaf('ram:RateApplicablePercent', category.percent);
  });
}

function lineItems(xml: XmlWriter, doc: EinvoiceDocument) {
  for (const line of doc.lines) {
    const unit: XmlAttributes = { unitCode: line.unitCode };
    xml.element('ram:IncludedSupplyChainTradeLineItem', () => {
      xml.element('ram:AssociatedDocumentLineDocument', () => {
        xml.leaf('ram:LineID', line.id);
        if (line.note !== null)
          xml.element('ram:IncludedNote', () => xml.leaf('ram:Content', line.note ?? ''));
      });
      xml.element('ram:SpecifiedTradeProduct', () => xml.leaf('ram:Name', line.name));
      xml.element('ram:SpecifiedLineTradeAgreement', () =>
        xml.element('ram:NetPriceProductTradePrice', () => {
          xml.leaf('ram:ChargeAmount', line.price);
          xml.optionalLeaf('ram:BasisQuantity', line.baseQuantity, unit);
        }),
      );
      xml.element('ram:SpecifiedLineTradeDelivery', () =>
        xml.leaf('ram:BilledQuantity', line.quantity, unit),
      );
      xml.element('ram:SpecifiedLineTradeSettlement', () => {
        tradeTax(xml, line.tax);
        xml.element('ram:SpecifiedTradeSettlementLineMonetarySummation', () =>
          xml.leaf('ram:LineTotalAmount', line.net),
        );
      });
    });
  }
}

function postalAddress(xml: XmlWriter, address: EinvoiceAddress) {
  xml.element('ram:PostalTradeAddress', () => {
    xml.optionalLeaf('ram:PostcodeCode', address.postalCode);
    xml.optionalLeaf('ram:LineOne', address.line1);
    xml.optionalLeaf('ram:LineTwo', address.line2);
    xml.optionalLeaf('ram:LineThree', address.line3);
    xml.optionalLeaf('ram:CityName', address.city);
    xml.leaf('ram:CountryID', address.country);
    xml.optionalLeaf('ram:CountrySubDivisionName', address.region);
  });
}

/** DefinedTradeContact: the telephone, then the email. */
function contact(xml: XmlWriter, phone: string | null, email: string | null) {
  if (phone === null && email === null) return;
  xml.element('ram:DefinedTradeContact', () => {
    if (phone !== null)
      xml.element('ram:TelephoneUniversalCommunication', () => xml.leaf('ram:CompleteNumber', phone));
    if (email !== null) xml.element('ram:EmailURIUniversalCommunication', () => xml.leaf('ram:URIID', email));
  });
}

/** A TradeParty's URIUniversalCommunication (its electronic address, BT-34/49). */
function endpoint(xml: XmlWriter, address: string | null) {
  if (address !== null)
    xml.element('ram:URIUniversalCommunication', () => xml.leaf('ram:URIID', address, { schemeID: 'EM' }));
}

function taxRegistration(xml: XmlWriter, id: string, scheme: 'VA' | 'FC') {
  xml.element('ram:SpecifiedTaxRegistration', () => xml.leaf('ram:ID', id, { schemeID: scheme }));
}

function sellerParty(xml: XmlWriter, seller: EinvoiceDocument['seller']) {
  xml.element('ram:SellerTradeParty', () => {
    xml.leaf('ram:Name', seller.legalName);
    if (seller.registrationId !== null || seller.tradingName !== null)
      xml.element('ram:SpecifiedLegalOrganization', () => {
        xml.optionalLeaf('ram:ID', seller.registrationId);
        xml.optionalLeaf('ram:TradingBusinessName', seller.tradingName);
      });
    contact(xml, seller.phone, seller.email);
    postalAddress(xml, seller.address);
    endpoint(xml, seller.endpoint);
    if (seller.vatId !== null) taxRegistration(xml, seller.vatId, 'VA');
    if (seller.taxNumber !== null) taxRegistration(xml, seller.taxNumber, 'FC');
  });
}

function buyerParty(xml: XmlWriter, buyer: EinvoiceDocument['buyer']) {
  xml.element('ram:BuyerTradeParty', () => {
    xml.leaf('ram:Name', buyer.legalName);
    if (buyer.registrationId !== null)
      xml.element('ram:SpecifiedLegalOrganization', () => xml.leaf('ram:ID', buyer.registrationId ?? ''));
    contact(xml, null, buyer.email);
    postalAddress(xml, buyer.address);
    endpoint(xml, buyer.endpoint);
    if (buyer.vatId !== null) taxRegistration(xml, buyer.vatId, 'VA');
  });
}

function agreement(xml: XmlWriter, doc: EinvoiceDocument) {
  xml.element('ram:ApplicableHeaderTradeAgreement', () => {
    xml.optionalLeaf('ram:BuyerReference', doc.orderReference);
    sellerParty(xml, doc.seller);
    buyerParty(xml, doc.buyer);
    if (doc.orderReference !== null)
      xml.element('ram:BuyerOrderReferencedDocument', () =>
        xml.leaf('ram:IssuerAssignedID', doc.orderReference ?? ''),
      );
  });
}

/** The header's delivery: the schema requires the element even when there is nothing to say. */
function delivery(xml: XmlWriter, doc: EinvoiceDocument) {
  const delivered = doc.delivery;
  if (delivered === null) {
    xml.empty('ram:ApplicableHeaderTradeDelivery');
    return;
  }
  xml.element('ram:ApplicableHeaderTradeDelivery', () => {
    xml.element('ram:ShipToTradeParty', () =>
      xml.element('ram:PostalTradeAddress', () => xml.leaf('ram:CountryID', delivered.country)),
    );
    xml.element('ram:ActualDeliverySupplyChainEvent', () =>
      dateTime(xml, 'ram:OccurrenceDateTime', delivered.date),
    );
  });
}

function settlement(xml: XmlWriter, doc: EinvoiceDocument) {
  const currency = { currencyID: doc.currency };
  const payee = doc.payee;
  xml.element('ram:ApplicableHeaderTradeSettlement', () => {
    xml.optionalLeaf('ram:PaymentReference', payee?.paymentId ?? null);
    xml.leaf('ram:InvoiceCurrencyCode', doc.currency);
    if (payee !== null)
      xml.element('ram:SpecifiedTradeSettlementPaymentMeans', () => {
        xml.leaf('ram:TypeCode', '58');
        xml.element('ram:PayeePartyCreditorFinancialAccount', () => {
          xml.leaf('ram:IBANID', payee.iban);
          xml.optionalLeaf('ram:AccountName', payee.holder);
        });
        if (payee.bic !== null)
          xml.element('ram:PayeeSpecifiedCreditorFinancialInstitution', () =>
            xml.leaf('ram:BICID', payee.bic ?? ''),
          );
      });
    for (const group of doc.breakdown)
      tradeTax(xml, group.category, {
        tax: group.tax,
        basis: group.taxable,
        exemptionCode: group.exemptionCode,
        exemptionReason: group.exemptionReason,
      });
    xml.element('ram:SpecifiedTradePaymentTerms', () => {
      xml.leaf('ram:Description', doc.paymentTerms);
      if (doc.dueOn !== null) dateTime(xml, 'ram:DueDateDateTime', doc.dueOn);
    });
    xml.element('ram:SpecifiedTradeSettlementHeaderMonetarySummation', () => {
      xml.leaf('ram:LineTotalAmount', doc.totals.lines);
      xml.leaf('ram:TaxBasisTotalAmount', doc.totals.taxExclusive);
      xml.leaf('ram:TaxTotalAmount', doc.taxTotal, currency);
      xml.leaf('ram:GrandTotalAmount', doc.totals.taxInclusive);
      xml.leaf('ram:DuePayableAmount', doc.totals.payable);
    });
    // BT-25/26: the invoice a credit note corrects.
    const corrects = doc.corrects;
    if (corrects !== null)
      xml.element('ram:InvoiceReferencedDocument', () => {
        xml.leaf('ram:IssuerAssignedID', corrects.number);
        dateTime(xml, 'ram:FormattedIssueDateTime', corrects.issuedOn, 'qdt');
      });
  });
}

/** The CII document of an e-invoice, as a Factur-X of profile EN 16931 carries it. */
export function ciiXml(doc: EinvoiceDocument): string {
  const xml = new XmlWriter();
  xml.element('rsm:CrossIndustryInvoice', NAMESPACES, () => {
    xml.element('rsm:ExchangedDocumentContext', () =>
      xml.element('ram:GuidelineSpecifiedDocumentContextParameter', () =>
        xml.leaf('ram:ID', EN16931_SPECIFICATION_ID),
      ),
    );
    xml.element('rsm:ExchangedDocument', () => {
      xml.leaf('ram:ID', doc.number);
      xml.leaf('ram:TypeCode', doc.typeCode);
      dateTime(xml, 'ram:IssueDateTime', doc.issuedOn);
      if (doc.note !== null) xml.element('ram:IncludedNote', () => xml.leaf('ram:Content', doc.note ?? ''));
    });
    xml.element('rsm:SupplyChainTradeTransaction', () => {
      lineItems(xml, doc);
      agreement(xml, doc);
      delivery(xml, doc);
      settlement(xml, doc);
    });
  });
  return xml.toString();
}
