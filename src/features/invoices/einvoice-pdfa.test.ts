import { PDFDocument, PDFName, PDFRawStream } from '@cantoo/pdf-lib';
import { describe, expect, it } from 'vitest';
import { strictPdfA3 } from './einvoice-pdfa.ts';

describe('strictPdfA3', () => {
  it('writes the XMP as UTF-8 with any seller name, escaped, and empties the information dictionary', async () => {
    const source = await PDFDocument.create();
    source.addPage();
    source.setTitle('Something else');
    source.setProducer('Another producer');
    const seller = 'Müller & Søn, Łódź — Ελλάδα <Ltd>';
    const out = await strictPdfA3(await source.save(), {
      number: 'INV-7',
      seller,
      at: new Date('2026-11-27T10:00:00Z'),
    });
    const parsed = await PDFDocument.load(out, { updateMetadata: false });
    const stream = parsed.catalog.lookup(PDFName.of('Metadata'));
    expect(stream).toBeInstanceOf(PDFRawStream);
    if (!(stream instanceof PDFRawStream)) return;
    const xmp = new TextDecoder('utf-8', { fatal: true }).decode(stream.getContents());
    expect(xmp).toContain('<rdf:li>Müller &amp; Søn, Łódź — Ελλάδα &lt;Ltd&gt;</rdf:li>');
    expect(xmp).toContain('<pdfaid:part>3</pdfaid:part>');
    expect(xmp).toContain('<xmp:CreateDate>2026-11-27T10:00:00Z</xmp:CreateDate>');
    expect(xmp.startsWith('<?xpacket begin="\uFEFF"')).toBe(true);
    expect(parsed.getTitle()).toBeUndefined();
    expect(parsed.getProducer()).toBeUndefined();
  });
});
