// The part of fontkit (pdfkit's font engine, which ships no types) that Tollbook uses: parsing a
// font file once, and asking whether it has a glyph for a character. pdfkit 0.20 accepts the parsed font wherever it accepts a font file; the
// community types of pdfkit predate that, so its two font methods gain that overload here.

declare module 'fontkit' {
  /** A parsed TrueType/OpenType font. */
  export interface Font {
    readonly postscriptName: string;
    /** True when the font maps the code point to a glyph of its own (not the missing-glyph box). */
    hasGlyphForCodePoint(codePoint: number): boolean;
  }
  /** Parses a font file (a collection's member would be chosen by its PostScript name). */
  export function create(buffer: Uint8Array, postscriptName?: string): Font;
}

declare namespace PDFKit.Mixins {
  interface PDFFont {
    registerFont(name: string, src: import('fontkit').Font): this;
  }
}

declare namespace PDFKit.Mixins {
  interface PDFAttachmentOptions {
    /** The file's relation to the document (PDF/A-3 `AFRelationship`); pdfkit writes it as given. */
    relationship?: 'Source' | 'Data' | 'Alternative' | 'Supplement' | 'Unspecified';
  }
}
