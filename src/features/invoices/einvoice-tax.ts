import type { TaxKind, TaxRateE8 } from './domain.ts';

// How an invoice line's tax data reads as an EN 16931 VAT category (UNTDID 5305, the subset
// EN 16931 allows). One function maps; the e-invoice, its checks and the design doc follow it.

export type VatCategory = 'S' | 'Z' | 'E' | 'AE' | 'K' | 'G' | 'O';

/** The kind each category is priced as, so lines of one category and rate form one tax group. */
export const CANONICAL_KIND: Readonly<Record<VatCategory, TaxKind>> = {
  S: 'standard',
  Z: 'zero',
  E: 'exempt',
  AE: 'reverse_charge',
  K: 'intra_community',
  G: 'export',
  O: 'not_subject',
};

/**
 * The category of a line: standard or reduced with a rate above 0 (or no kind with a rate) is S;
 * any of those at 0 %, and `zero`, are Z; the others map one to one.
 */
export function vatCategoryOf(taxKind: TaxKind | null, rate: TaxRateE8): VatCategory {
  switch (taxKind) {
    case null:
    case 'standard':
    case 'reduced':
      return rate > 0n ? 'S' : 'Z';
    case 'zero':
      return 'Z';
    case 'exempt':
      return 'E';
    case 'reverse_charge':
      return 'AE';
    case 'intra_community':
      return 'K';
    case 'export':
      return 'G';
    case 'not_subject':
      return 'O';
  }
}

/**
 * What a VAT breakdown of a category must say about why no VAT is charged (BR-AE-10, BR-IC-10,
 * BR-G-10, BR-O-10): the VATEX code and its standard text. Exempt (E) takes the invoice's own
 * `tax_exempt_reason` instead; S and Z carry no reason (BR-Z-10).
 */
export const EXEMPTION: Readonly<Partial<Record<VatCategory, { code: string; text: string }>>> = {
  AE: { code: 'VATEX-EU-AE', text: 'Reverse charge' },
  K: { code: 'VATEX-EU-IC', text: 'Intra-community supply' },
  G: { code: 'VATEX-EU-G', text: 'Export outside the EU' },
  O: { code: 'VATEX-EU-O', text: 'Not subject to VAT' },
};

/** Categories after which the seller must show a VAT ID or a tax registration (BR-S/Z/E/AE-02). */
export const NEEDS_SELLER_TAX_ID: ReadonlySet<VatCategory> = new Set(['S', 'Z', 'E', 'AE']);
/** Categories after which only a VAT ID will do for the seller (BR-IC-02, BR-G-02). */
export const NEEDS_SELLER_VAT_ID: ReadonlySet<VatCategory> = new Set(['K', 'G']);
