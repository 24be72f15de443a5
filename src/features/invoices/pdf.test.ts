import fc from 'fast-check';
import PDFDocument from 'pdfkit';
import { describe, expect, it } from 'vitest';
import { documentFonts } from '../../platform/fonts.ts';
import { cellHeight } from './pdf.ts';

// A line's cells are measured without laying out the ones that fit on one line: the height must
// be what pdfkit's own layout gives for every text and width.
describe('cellHeight', () => {
  it('equals pdfkit heightOfString for short, long and multi-line cells at any column width', () => {
    const doc = new PDFDocument({ size: 'A4' });
    const { regular } = documentFonts();
    doc.registerFont('regular', regular).font('regular').fontSize(9.5);
    const word = fc.oneof(
      fc.stringMatching(/^[0-9.,−-]{1,12}$/),
      fc.constantFrom('EUR', '19%', '—', 'Consulting', 'Übergrößenträger', 'ΕΛΛΑΔΑ', 'day', 'kg'),
      fc.string({ minLength: 1, maxLength: 14 }),
    );
    const text = fc
      .array(fc.tuple(word, fc.constantFrom(' ', ' ', '\n')), { minLength: 1, maxLength: 12 })
      .map((parts) =>
        parts
          .map(([w, gap]) => w + gap)
          .join('')
          .trimEnd(),
      );
    expect(cellHeight(doc, '', 60)).toBe(doc.heightOfString('', { width: 60 }));
    fc.assert(
      fc.property(text, fc.integer({ min: 20, max: 300 }), (cell, width) => {
        expect(cellHeight(doc, cell, width)).toBe(doc.heightOfString(cell, { width }));
      }),
      { numRuns: 500 },
    );
  });
});
