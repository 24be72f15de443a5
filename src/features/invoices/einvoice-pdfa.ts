import { PDFArray, PDFDict, PDFDocument, PDFName, PDFNumber, PDFStream } from '@cantoo/pdf-lib';

// The last pass over a Factur-X that @e-invoice-eu/core made, so that it is PDF/A-3b in every
// detail a validator checks and the library leaves wrong:
// - its sRGB output intent's ICC stream lacks `/N 3` (the profile's number of components);
// - its XMP packet is written one byte per UTF-16 unit, so a seller named "Müller" or "Łódź"
//   gives bytes that are not UTF-8, and its dc:title and pdf:Producer differ from the
//   document information dictionary's Title and Producer, which PDF/A requires to agree.
// The pass writes the XMP again as UTF-8 (the same PDF/A identification, Dublin Core,
// Factur-X extension schema and fx: properties) and empties the information dictionary, so no
// entry of it can disagree with the XMP. It does no I/O.

export type FacturXFacts = {
  /** The document's number (BT-1). */
  number: string;
  /** The seller's legal name (BT-27). */
  seller: string;
  /** When the file is made. */
  at: Date;
};

const escapeXml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c,
  );

/** The fx: properties and the extension schema that declares them (Factur-X 1.0, PDF/A-3 §6.6.2.3). */
const FX_PROPERTIES: [name: string, description: string][] = [
  ['DocumentFileName', 'The name of the embedded XML document'],
  ['DocumentType', 'The type of the hybrid document in capital letters, e.g. INVOICE or ORDER'],
  ['Version', 'The actual version of the standard applying to the embedded XML document'],
  ['ConformanceLevel', 'The conformance level of the embedded XML document'],
];

function xmpPacket(facts: FacturXFacts): string {
  const title = escapeXml(`Invoice ${facts.number}`);
  const seller = escapeXml(facts.seller);
  const at = facts.at.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const property = ([name, description]: [string, string]) => `
        <rdf:li rdf:parseType="Resource">
          <pdfaProperty:name>${name}</pdfaProperty:name>
          <pdfaProperty:valueType>Text</pdfaProperty:valueType>
          <pdfaProperty:category>external</pdfaProperty:category>
          <pdfaProperty:description>${description}</pdfaProperty:description>
        </rdf:li>`;
  return `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/">
   <pdfaid:part>3</pdfaid:part>
   <pdfaid:conformance>B</pdfaid:conformance>
  </rdf:Description>
  <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">
   <dc:format>application/pdf</dc:format>
   <dc:title><rdf:Alt><rdf:li xml:lang="x-default">${title}</rdf:li></rdf:Alt></dc:title>
   <dc:creator><rdf:Seq><rdf:li>${seller}</rdf:li></rdf:Seq></dc:creator>
  </rdf:Description>
  <rdf:Description rdf:about="" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">
   <pdf:Producer>Tollbook</pdf:Producer>
  </rdf:Description>
  <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/">
   <xmp:CreatorTool>Tollbook</xmp:CreatorTool>
   <xmp:CreateDate>${at}</xmp:CreateDate>
   <xmp:ModifyDate>${at}</xmp:ModifyDate>
   <xmp:MetadataDate>${at}</xmp:MetadataDate>
  </rdf:Description>
  <rdf:Description rdf:about=""
    xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/"
    xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#"
    xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">
   <pdfaExtension:schemas>
    <rdf:Bag>
     <rdf:li rdf:parseType="Resource">
      <pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>
      <pdfaSchema:namespaceURI>urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#</pdfaSchema:namespaceURI>
      <pdfaSchema:prefix>fx</pdfaSchema:prefix>
      <pdfaSchema:property>
       <rdf:Seq>${FX_PROPERTIES.map(property).join('')}
       </rdf:Seq>
      </pdfaSchema:property>
     </rdf:li>
    </rdf:Bag>
   </pdfaExtension:schemas>
  </rdf:Description>
  <rdf:Description rdf:about="" xmlns:fx="urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#">
   <fx:DocumentType>INVOICE</fx:DocumentType>
   <fx:DocumentFileName>factur-x.xml</fx:DocumentFileName>
   <fx:Version>1.0</fx:Version>
   <fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>`;
}

/** The library's Factur-X made strictly PDF/A-3b (see above). */
export async function strictPdfA3(pdf: Uint8Array, facts: FacturXFacts): Promise<Uint8Array> {
  const doc = await PDFDocument.load(pdf, { updateMetadata: false });
  const intents = doc.catalog.lookupMaybe(PDFName.of('OutputIntents'), PDFArray);
  for (let index = 0; index < (intents?.size() ?? 0); index++) {
    const profile = intents
      ?.lookupMaybe(index, PDFDict)
      ?.lookupMaybe(PDFName.of('DestOutputProfile'), PDFStream);
    profile?.dict.set(PDFName.of('N'), PDFNumber.of(3));
  }
  const xmp = Buffer.from(xmpPacket(facts), 'utf8');
  const metadata = doc.context.stream(new Uint8Array(xmp), {
    Type: 'Metadata',
    Subtype: 'XML',
    Length: xmp.length,
  });
  doc.catalog.set(PDFName.of('Metadata'), doc.context.register(metadata));
  const info = doc.context.trailerInfo.Info;
  const entries = info ? doc.context.lookupMaybe(info, PDFDict) : undefined;
  for (const key of entries?.keys() ?? []) entries?.delete(key);
  return doc.save();
}
