import { COUNTRY_CODES, CURRENCY_CODES, REC20_UNIT_CODES } from './einvoice-code-lists.ts';

// The code lists an e-invoice draws from: countries (ISO 3166-1 alpha-2), currencies (ISO 4217)
// and units (UN/ECE Recommendation 20), held as data in einvoice-code-lists.ts.

/** The code lists, as checks. */
export type EinvoiceCodes = {
  isCountry(code: string): boolean;
  isCurrency(code: string): boolean;
  isUnit(code: string): boolean;
};

const setOf = (codes: string): ReadonlySet<string> => new Set(codes.trim().split(/\s+/));

let made: EinvoiceCodes | undefined;

/** The code lists, made into sets on first use. */
export function einvoiceCodes(): EinvoiceCodes {
  if (made === undefined) {
    const countries = setOf(COUNTRY_CODES);
    const currencies = setOf(CURRENCY_CODES);
    const units = setOf(REC20_UNIT_CODES);
    made = {
      isCountry: (code) => countries.has(code),
      isCurrency: (code) => currencies.has(code),
      isUnit: (code) => units.has(code),
    };
  }
  return made;
}

/** A line's unit word as a Rec. 20 code; words without a code count as "one" (C62). */
const UNIT_CODES: ReadonlyMap<string, string> = new Map(
  Object.entries({
    '': 'C62',
    piece: 'H87',
    pieces: 'H87',
    pc: 'H87',
    pcs: 'H87',
    unit: 'C62',
    units: 'C62',
    item: 'C62',
    items: 'C62',
    each: 'C62',
    ea: 'C62',
    hour: 'HUR',
    hours: 'HUR',
    h: 'HUR',
    hr: 'HUR',
    hrs: 'HUR',
    minute: 'MIN',
    minutes: 'MIN',
    min: 'MIN',
    day: 'DAY',
    days: 'DAY',
    d: 'DAY',
    week: 'WEE',
    weeks: 'WEE',
    month: 'MON',
    months: 'MON',
    mo: 'MON',
    year: 'ANN',
    years: 'ANN',
    kg: 'KGM',
    g: 'GRM',
    t: 'TNE',
    km: 'KMT',
    m: 'MTR',
    cm: 'CMT',
    mm: 'MMT',
    m2: 'MTK',
    m3: 'MTQ',
    l: 'LTR',
    litre: 'LTR',
    liter: 'LTR',
    kwh: 'KWH',
    set: 'SET',
    sets: 'SET',
    page: 'ZZ',
    pages: 'ZZ',
    word: 'ZZ',
    words: 'ZZ',
    license: 'C62',
    licence: 'C62',
    seat: 'C62',
    seats: 'C62',
    call: 'C62',
    calls: 'C62',
    request: 'C62',
    requests: 'C62',
  }),
);

/**
 * The Rec. 20 code of a unit word, and the word itself when the code does not say it (kept as a
 * line note so the buyer still reads it). A word that already is a Rec. 20 code is kept.
 */
export function unitCodeOf(word: string, codes: EinvoiceCodes): { code: string; word: string | null } {
  const trimmed = word.trim();
  const known = UNIT_CODES.get(trimmed.toLowerCase());
  if (known !== undefined) {
    const vague = known === 'C62' || known === 'ZZ';
    return { code: known, word: vague && trimmed !== '' ? trimmed : null };
  }
  if (codes.isUnit(trimmed)) return { code: trimmed, word: null };
  return { code: 'C62', word: trimmed };
}
