import { invoiceSchema } from '@e-invoice-eu/core';

// The code lists an e-invoice draws from. Countries (ISO 3166-1 alpha-2) and currencies (ISO 4217)
// are the ones @e-invoice-eu/core's own schema accepts, read from it, so a value we let through is
// one the library takes; units are UN/ECE Recommendation 20 codes for the words people write.

type CodeLists = Record<string, { enum?: readonly string[] } | undefined>;

function codeList(name: string): ReadonlySet<string> {
  const lists = (invoiceSchema as unknown as { $defs?: { codeLists?: CodeLists } }).$defs?.codeLists ?? {};
  const values = lists[name]?.enum;
  if (values === undefined) throw new Error(`@e-invoice-eu/core has no code list ${name}`);
  return new Set(values);
}

const COUNTRIES = codeList('ISO3166');
const CURRENCIES = codeList('ISO4217');
const UNITS = codeList('UNECERec20');

export const isCountryCode = (code: string): boolean => COUNTRIES.has(code);
export const isCurrencyCode = (code: string): boolean => CURRENCIES.has(code);

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
export function unitCodeOf(word: string): { code: string; word: string | null } {
  const trimmed = word.trim();
  const known = UNIT_CODES.get(trimmed.toLowerCase());
  if (known !== undefined) {
    const vague = known === 'C62' || known === 'ZZ';
    return { code: known, word: vague && trimmed !== '' ? trimmed : null };
  }
  if (UNITS.has(trimmed)) return { code: trimmed, word: null };
  return { code: 'C62', word: trimmed };
}
