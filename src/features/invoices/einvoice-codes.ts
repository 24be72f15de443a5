// The code lists an e-invoice draws from. Countries (ISO 3166-1 alpha-2), currencies (ISO 4217)
// and units (UN/ECE Recommendation 20) are the ones @e-invoice-eu/core's own schema accepts, read
// from it, so a value we let through is one the library takes. The library is loaded on first
// use (about a second of CPU), not when the server starts.

/** The code lists, as checks. */
export type EinvoiceCodes = {
  isCountry(code: string): boolean;
  isCurrency(code: string): boolean;
  isUnit(code: string): boolean;
};

type CodeLists = Record<string, { enum?: readonly string[] } | undefined>;

let loaded: Promise<EinvoiceCodes> | undefined;

/** The library's code lists, loaded once. */
export function einvoiceCodes(): Promise<EinvoiceCodes> {
  loaded ??= import('@e-invoice-eu/core').then(({ invoiceSchema }) => {
    // The library types its JSON schema as an opaque object; its code lists sit under $defs. A
    // library without them is a broken install, never "no codes known".
    const lists = (invoiceSchema as unknown as { $defs?: { codeLists?: CodeLists } }).$defs?.codeLists;
    if (lists === undefined)
      throw new Error('bug: @e-invoice-eu/core ships no code lists in its invoice schema');
    const list = (name: string): ReadonlySet<string> => {
      const values = lists[name]?.enum;
      if (values === undefined) throw new Error(`@e-invoice-eu/core has no code list ${name}`);
      return new Set(values);
    };
    const countries = list('ISO3166');
    const currencies = list('ISO4217');
    const units = list('UNECERec20');
    return {
      isCountry: (code) => countries.has(code),
      isCurrency: (code) => currencies.has(code),
      isUnit: (code) => units.has(code),
    };
  });
  return loaded;
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
