// What the XMP metadata of Tollbook's PDFs says beyond what pdfkit writes itself. pdfkit writes
// the packet, the PDF/A identification (for a PDF/A subset), the creation date, the creator tool
// and the producer, each agreeing with the document information dictionary as PDF/A requires.
// It copies a Title or an Author into the XMP unescaped, so a seller named "Müller & Søn" would
// break the packet: the title and the seller are therefore never put in the information
// dictionary, and are written here, escaped. A Factur-X adds its extension schema and the fx:
// properties that name the embedded CII (Factur-X 1.0, PDF/A-3 §6.6.2.3).

const escapeXml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c,
  );

/** The Dublin Core description: the document's title and who issued it. */
export function dublinCoreXmp(facts: { title: string; creator: string }): string {
  return `<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">
   <dc:format>application/pdf</dc:format>
   <dc:title><rdf:Alt><rdf:li xml:lang="x-default">${escapeXml(facts.title)}</rdf:li></rdf:Alt></dc:title>
   <dc:creator><rdf:Seq><rdf:li>${escapeXml(facts.creator)}</rdf:li></rdf:Seq></dc:creator>
  </rdf:Description>`;
}

/** The name the CII file has inside a Factur-X, as its fx:DocumentFileName says. */
export const FACTUR_X_FILE_NAME = 'factur-x.xml';

/** The fx: properties and the extension schema that declares them. */
const FX_PROPERTIES: [name: string, description: string][] = [
  ['DocumentFileName', 'The name of the embedded XML document'],
  ['DocumentType', 'The type of the hybrid document in capital letters, e.g. INVOICE or ORDER'],
  ['Version', 'The actual version of the standard applying to the embedded XML document'],
  ['ConformanceLevel', 'The conformance level of the embedded XML document'],
];

/** The Factur-X extension schema and the fx: properties of an EN 16931 invoice. */
export function facturXXmp(): string {
  const property = ([name, description]: [string, string]) => `
        <rdf:li rdf:parseType="Resource">
          <pdfaProperty:name>${name}</pdfaProperty:name>
          <pdfaProperty:valueType>Text</pdfaProperty:valueType>
          <pdfaProperty:category>external</pdfaProperty:category>
          <pdfaProperty:description>${description}</pdfaProperty:description>
        </rdf:li>`;
  return `<rdf:Description rdf:about=""
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
   <fx:DocumentFileName>${FACTUR_X_FILE_NAME}</fx:DocumentFileName>
   <fx:Version>1.0</fx:Version>
   <fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>
  </rdf:Description>`;
}
