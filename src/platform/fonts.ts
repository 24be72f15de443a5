import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { create, type Font } from 'fontkit';

// The typeface every PDF the server makes is set in: DejaVu Sans (regular and bold) from the
// `dejavu-fonts-ttf` package, embedded (as a subset) in the document rather than named, so the
// PDF looks the same everywhere and meets PDF/A, which refuses fonts it does not carry. DejaVu
// covers Latin with every European accent, Greek and Cyrillic in one file.
//
// Each face is parsed once per process and handed to pdfkit as a parsed font (pdfkit takes them
// since 0.20). A parsed font is read-only to pdfkit: every document takes its own subset of the
// glyphs it uses, so documents share the font's decoded tables (glyph outlines, metrics, the
// kerning and substitution tables) instead of decoding the 700 KB file again for each PDF.

export type DocumentFonts = { regular: Font; bold: Font };

let parsed: DocumentFonts | undefined;

/** The two faces, read and parsed on first use. */
export function documentFonts(): DocumentFonts {
  if (!parsed) {
    const require = createRequire(import.meta.url);
    const face = (file: string) => create(readFileSync(require.resolve(`dejavu-fonts-ttf/ttf/${file}`)));
    parsed = { regular: face('DejaVuSans.ttf'), bold: face('DejaVuSans-Bold.ttf') };
  }
  return parsed;
}
