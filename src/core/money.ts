// Money is a bigint count of 10⁻⁸ units. This file is the only place that turns text or JSON
// numbers into amounts and amounts back into text, so every rounding or refusal rule is here.

declare const amountBrand: unique symbol;
export type AmountE8 = bigint & { readonly [amountBrand]: true };

export const SCALE = 8;
export const UNIT = 100_000_000n;
/** The spec's upper bound for a "positive amount": 1e16 whole units. */
export const AMOUNT_MAX = asAmount(10n ** 16n * UNIT);
export const ZERO = asAmount(0n);

export function asAmount(value: bigint): AmountE8 {
  return value as AmountE8;
}

export type AmountProblem = 'not_decimal' | 'too_precise' | 'not_finite' | 'too_large';
export type ParsedAmount = { ok: true; value: AmountE8 } | { ok: false; problem: AmountProblem };

/**
 * Digits before the point beyond this are refused without building the number: no amount of
 * any currency needs them, and turning a megabyte of digits into a bigint takes superlinear time.
 */
export const WHOLE_DIGITS_MAX = 40;

function isDigitCode(code: number): boolean {
  return code >= 48 && code <= 57;
}

/**
 * Parses the spec's decimal-string grammar exactly: an optional sign, then digits with an
 * optional point and fraction ("1", "1.", ".5", "-2.25"); exponents, blanks and strings of only
 * signs and dots are not decimals. More than eight fraction digits (after trailing zeros) is
 * refused. One scan by index, so the time is linear in the text whatever its shape.
 */
export function parseDecimalText(text: string): ParsedAmount {
  let index = 0;
  const sign = text.charCodeAt(0);
  if (sign === 43 || sign === 45) index = 1;
  const wholeStart = index;
  while (isDigitCode(text.charCodeAt(index))) index++;
  const wholeEnd = index;
  let fractionStart = index;
  if (text.charCodeAt(index) === 46) {
    fractionStart = ++index;
    while (isDigitCode(text.charCodeAt(index))) index++;
  }
  const fractionEnd = index;
  if (index !== text.length || (wholeEnd === wholeStart && fractionEnd === fractionStart))
    return { ok: false, problem: 'not_decimal' };
  let significantStart = wholeStart;
  while (significantStart < wholeEnd && text.charCodeAt(significantStart) === 48) significantStart++;
  let significantEnd = fractionEnd;
  while (significantEnd > fractionStart && text.charCodeAt(significantEnd - 1) === 48) significantEnd--;
  if (significantEnd - fractionStart > SCALE) return { ok: false, problem: 'too_precise' };
  if (wholeEnd - significantStart > WHOLE_DIGITS_MAX) return { ok: false, problem: 'too_large' };
  const whole = text.slice(significantStart, wholeEnd);
  const fraction = text.slice(fractionStart, significantEnd);
  const units = BigInt(whole.length > 0 ? whole : '0') * UNIT + BigInt(fraction.padEnd(SCALE, '0'));
  return { ok: true, value: asAmount(sign === 45 ? -units : units) };
}

/**
 * A JSON number reaches us either as a JS number that survived parsing exactly (the JSON body
 * parser keeps the source text otherwise), so its shortest decimal spelling is what was sent.
 */
export function parseJsonNumber(value: number): ParsedAmount {
  if (!Number.isFinite(value)) return { ok: false, problem: 'not_finite' };
  return parseDecimalText(expandExponent(String(value)));
}

/** Accepts what an amount field may carry: a JSON number or a decimal string. */
export function parseAmountInput(value: unknown): ParsedAmount {
  if (typeof value === 'number') return parseJsonNumber(value);
  if (typeof value === 'string') return parseDecimalText(value);
  return { ok: false, problem: 'not_decimal' };
}

/** Turns "1.5e+21" or "2e-7" into plain positional notation; plain text is returned as is. */
export function expandExponent(text: string): string {
  const match = /^([+-]?)(\d+)(?:\.(\d+))?[eE]([+-]?\d+)$/.exec(text);
  if (!match) return text;
  const sign = match[1] === '-' ? '-' : '';
  const digits = (match[2] ?? '') + (match[3] ?? '');
  const pointAt = (match[2] ?? '').length + Number(match[4]);
  if (pointAt <= 0) return `${sign}0.${'0'.repeat(-pointAt)}${digits}`;
  if (pointAt >= digits.length) return `${sign}${digits}${'0'.repeat(pointAt - digits.length)}`;
  return `${sign}${digits.slice(0, pointAt)}.${digits.slice(pointAt)}`;
}

/** Eight decimals always: the records' spelling ("1.50000000"). */
export function formatAmount(amount: AmountE8): string {
  const negative = amount < 0n;
  const units = negative ? -amount : amount;
  const whole = units / UNIT;
  const fraction = (units % UNIT).toString().padStart(SCALE, '0');
  return `${negative ? '-' : ''}${whole}.${fraction}`;
}

/** No trailing zeros: the key webhook's spelling ("1.5", "2"). */
export function formatAmountTrimmed(amount: AmountE8): string {
  const full = formatAmount(amount);
  // The fraction always has eight digits, so trimming stops at the point at the latest.
  let end = full.length;
  while (full.charCodeAt(end - 1) === 48) end--;
  if (full.charCodeAt(end - 1) === 46) end--;
  return full.slice(0, end);
}

/**
 * Exactly `places` decimals ("12.30" for two), or null when the amount has more digits than
 * that: a payment order that must not round (a bank QR code's amount).
 */
export function formatAmountFixed(amount: AmountE8, places: number): string | null {
  if (places < 0 || places > SCALE) throw new RangeError(`places must be 0 to ${SCALE}.`);
  const full = formatAmount(amount);
  const cut = full.length - (SCALE - places);
  if (/[^0]/.test(full.slice(cut))) return null;
  return places === 0 ? full.slice(0, cut - 1) : full.slice(0, cut);
}

export function isPositive(amount: AmountE8): boolean {
  return amount > 0n;
}

/**
 * For people reading a page: trailing zeros trimmed but at least two decimals and a thousands
 * separator ("1,234.50", "0.00012"), never rounded.
 */
export function formatAmountForPeople(amount: AmountE8): string {
  return recordSpellingForPeople(formatAmount(amount));
}

/**
 * True when `text` is already the records' spelling, exactly what `formatAmount` writes (no
 * leading zeros, eight places, no negative zero): reading it and writing it again changes nothing.
 */
export function isRecordSpelling(text: string): boolean {
  return RECORD_SPELLING.test(text) && text !== '-0.00000000';
}
const RECORD_SPELLING = /^-?(?:0|[1-9]\d{0,40})\.\d{8}$/;

/**
 * A decimal text (a record's "1234.50000000", or any spelling the grammar takes) as people read
 * it; null when it is not a decimal. A page shows many records' amounts, so their spelling is
 * reshaped as text rather than read into an amount and written again (the same digits either way).
 * Without a locale it is written in English ("1,234.50"); with one, as that locale writes numbers.
 */
export function formatDecimalTextForPeople(text: string, locale?: string): string | null {
  if (locale !== undefined) {
    // In a book's locale (a document's quantities and unit prices): Intl writes the separators.
    const record = isRecordSpelling(text) ? text : parseToRecord(text);
    if (record === null) return null;
    return numberFormatter(locale, Math.max(placesUsed(record), 2)).format(
      record as Intl.StringNumericLiteral,
    );
  }
  if (isRecordSpelling(text)) return recordSpellingForPeople(text);
  const parsed = parseDecimalText(text);
  return parsed.ok ? formatAmountForPeople(parsed.value) : null;
}

function recordSpellingForPeople(full: string): string {
  const point = full.length - SCALE - 1;
  let end = full.length;
  while (end > point + 3 && full.charCodeAt(end - 1) === 48) end--;
  const negative = full.charCodeAt(0) === 45;
  return `${negative ? '-' : ''}${groupThousands(full.slice(negative ? 1 : 0, point))}${full.slice(point, end)}`;
}

/** "1234567" → "1,234,567": a comma before every group of three digits from the right. */
function groupThousands(digits: string): string {
  if (digits.length <= 3) return digits;
  const head = digits.length % 3 || 3;
  let grouped = digits.slice(0, head);
  for (let at = head; at < digits.length; at += 3) grouped += `,${digits.slice(at, at + 3)}`;
  return grouped;
}

/** The same with its currency after it, as pages, mail and PDFs show amounts ("2.00 USDC"). */
export function formatMoneyForPeople(amount: AmountE8, currency: string, locale = 'en'): string {
  return formatMoneyTextForPeople(formatAmount(amount), currency, locale) ?? formatAmount(amount);
}

// Fiat currencies are the ISO 4217 codes Intl knows; anything else (USDC, ETH…) is a token.
const FIAT_CODES = new Set(Intl.supportedValuesOf('currency'));

/**
 * The minor digits a fiat currency is written with (EUR 2, JPY 0, BHD 3: Intl's currency
 * digits, from ISO 4217); undefined for a token, which has no such rule.
 */
export function fiatMinorDigits(currency: string): number | undefined {
  const code = currency.toUpperCase();
  if (!FIAT_CODES.has(code)) return undefined;
  let digits = MINOR_DIGITS.get(code);
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions()
      .maximumFractionDigits;
    MINOR_DIGITS.set(code, digits);
  }
  return digits;
}

// Making an Intl formatter costs tens of microseconds, using one a few: a 200-line invoice writes
// hundreds of amounts. Each is a fixed function of what it is made from, so it is made once per
// currency (its digits, a fact of ISO 4217) or per (locale, places) and kept.
const MINOR_DIGITS = new Map<string, number | undefined>();
const numberFormatters = new Map<string, Intl.NumberFormat>();

function numberFormatter(locale: string, places: number): Intl.NumberFormat {
  const key = `${locale}|${places}`;
  let formatter = numberFormatters.get(key);
  if (formatter === undefined) {
    formatter = new Intl.NumberFormat(locale, {
      minimumFractionDigits: places,
      maximumFractionDigits: places,
    });
    numberFormatters.set(key, formatter);
  }
  return formatter;
}

/** Places a record's spelling needs once its trailing zeros go (0 to 8). */
function placesUsed(full: string): number {
  let places = SCALE;
  while (places > 0 && full.charCodeAt(full.length - SCALE - 1 + places) === 48) places--;
  return places;
}

/**
 * An amount of a currency as people read it in a locale, with the code after it: a fiat amount
 * with its currency's minor digits ("1,234.50 EUR", "1,235 JPY", "1.234,500 BHD" in de), a token
 * trimmed to what matters but at least two places ("0.000125 USDC", "2.50 ETH"). Never rounded:
 * a fiat amount finer than its minor unit keeps the digits it has. Intl writes the separators;
 * it reads the decimal text as it is, so no digit passes through a float.
 */
export function formatMoneyTextForPeople(text: string, currency: string, locale = 'en'): string | null {
  const parsed = isRecordSpelling(text) ? text : parseToRecord(text);
  if (parsed === null) return null;
  const minor = fiatMinorDigits(currency);
  const places = Math.max(placesUsed(parsed), minor ?? 2);
  const number = numberFormatter(locale, places).format(parsed as Intl.StringNumericLiteral);
  return `${number} ${currency}`;
}

function parseToRecord(text: string): string | null {
  const parsed = parseDecimalText(text);
  return parsed.ok ? formatAmount(parsed.value) : null;
}
