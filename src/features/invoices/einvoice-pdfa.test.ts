import { execFileSync } from 'node:child_process';
import { PDFName, PDFRawStream, PDFDocument as PdfReader } from '@cantoo/pdf-lib';
import PDFDocument from 'pdfkit';
import { describe, expect, it } from 'vitest';
import { dublinCoreXmp, facturXXmp } from './einvoice-pdfa.ts';

/** A one-page PDF/A-3b with the two fragments in its XMP, as pdf.ts makes a Factur-X. */
function pdfWith(fragments: string[]): Promise<Buffer> {
  const doc = new PDFDocument({
    pdfVersion: '1.7',
    subset: 'PDF/A-3b',
    info: { Creator: 'Tollbook', Producer: 'Tollbook', CreationDate: new Date('2026-11-27T10:00:00Z') },
  });
  for (const fragment of fragments) doc.appendXML(fragment);
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve) => doc.on('end', () => resolve(Buffer.concat(chunks))));
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  doc.end();
  return done;
}

describe('the XMP of a Factur-X', () => {
  it('is well-formed UTF-8 with any seller name, escaped, beside what pdfkit writes', async () => {
    const seller = 'Müller & Søn, Łódź — Ελλάδα <Ltd>';
    const pdf = await pdfWith([dublinCoreXmp({ title: 'Invoice A&B-7', creator: seller }), facturXXmp()]);
    const parsed = await PdfReader.load(pdf, { updateMetadata: false });
    const stream = parsed.catalog.lookup(PDFName.of('Metadata'));
    expect(stream).toBeInstanceOf(PDFRawStream);
    if (!(stream instanceof PDFRawStream)) return;
    const xmp = new TextDecoder('utf-8', { fatal: true }).decode(stream.getContents());
    // xmllint refuses a packet that is not well-formed XML (it exits non-zero and this throws).
    execFileSync('xmllint', ['--noout', '-'], { input: xmp });
    expect(xmp).toContain('<rdf:li>Müller &amp; Søn, Łódź — Ελλάδα &lt;Ltd&gt;</rdf:li>');
    expect(xmp).toContain('<rdf:li xml:lang="x-default">Invoice A&amp;B-7</rdf:li>');
    expect(xmp).toContain('<pdfaid:part>3</pdfaid:part>');
    expect(xmp).toContain('<fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>');
    expect(xmp).toContain('<xmp:CreateDate>2026-11-27T10:00:00Z</xmp:CreateDate>');
    expect(xmp.startsWith('<?xpacket begin="\uFEFF"')).toBe(true);
    // What the information dictionary says, the XMP says too; it names no title or author.
    expect(parsed.getTitle()).toBeUndefined();
    expect(parsed.getAuthor()).toBeUndefined();
    expect(parsed.getProducer()).toBe('Tollbook');
    expect(xmp).toContain('<pdf:Producer>Tollbook</pdf:Producer>');
    expect(parsed.getCreator()).toBe('Tollbook');
    expect(xmp).toContain('<xmp:CreatorTool>Tollbook</xmp:CreatorTool>');
  });
});
