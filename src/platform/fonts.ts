import { createRequire } from 'node:module';

// The typeface every PDF the server makes is set in: DejaVu Sans (regular and bold) from the
// `dejavu-fonts-ttf` package, embedded (as a subset) in the document rather than named, so the
// PDF looks the same everywhere and meets PDF/A, which refuses fonts it does not carry. DejaVu
// covers Latin with every European accent, Greek and Cyrillic in one file.

export type DocumentFonts = { regular: string; bold: string };

let found: DocumentFonts | undefined;

/** The paths of the two font files (pdfkit reads a font file by its path), resolved once. */
export function documentFonts(): DocumentFonts {
  if (!found) {
    const require = createRequire(import.meta.url);
    const path = (file: string) => require.resolve(`dejavu-fonts-ttf/ttf/${file}`);
    found = { regular: path('DejaVuSans.ttf'), bold: path('DejaVuSans-Bold.ttf') };
  }
  return found;
}
