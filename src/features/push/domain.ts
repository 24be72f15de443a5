import { type AmountE8, parseAmountInput } from '../../core/money.ts';

// Rules for pushed rows, with no I/O. Each row is judged on its own: a bad row is rejected with
// its reason and the good rows of the same batch still book.

export const ROWS_PER_PUSH_MAX = 500;

export type PushRow = {
  index: number;
  externalId: string;
  accountKey: string;
  currency: string;
  occurredOn: string;
  amount: AmountE8;
  payee: string;
  note: string;
};

export type RowError = { index: number; external_id: string | null; error: string; detail: string };

const DATE_SHAPE = /^(\d{4})-(\d{2})-(\d{2})$/;
const CURRENCY_SHAPE = /^[A-Za-z0-9]{2,12}$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isCalendarDate(text: string): boolean {
  const match = DATE_SHAPE.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  return days !== undefined && day <= days;
}

/** Characters as a person counts them (code points): a surrogate pair is one. */
function codePoints(value: string): number {
  let count = value.length;
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index);
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < value.length) {
      const next = value.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        index++;
      }
    }
  }
  return count;
}

/** Whether `value` has min to max code points; counted only when its UTF-16 length leaves doubt. */
function lengthWithin(value: string, min: number, max: number): boolean {
  // A string of n UTF-16 units holds between n/2 and n code points.
  if (value.length <= max && value.length >= 2 * min) return true;
  const length = codePoints(value);
  return length >= min && length <= max;
}

/** The field's text, or the sentence saying what is wrong with it. */
function text(raw: Record<string, unknown>, field: string, min: number, max: number, fallback?: string) {
  const value = raw[field] ?? fallback;
  if (typeof value !== 'string')
    return { problem: value === undefined ? `${field} is required.` : `${field} must be a string.` };
  if (!lengthWithin(value, min, max)) return { problem: `${field} must be ${min} to ${max} characters.` };
  if (value.includes('\u0000')) return { problem: `${field} may not contain the NUL character.` };
  return value;
}

type Judgement = { ok: true; row: PushRow } | { ok: false; error: RowError };

function refusal(index: number, detail: string, externalId: string | null = null): Judgement {
  return { ok: false, error: { index, external_id: externalId, error: 'invalid_row', detail } };
}

/** The row's amount, or why it is refused (the field is a string or a number). */
function amountOf(raw: string | number): AmountE8 | string {
  const amount = parseAmountInput(raw);
  if (!amount.ok)
    return `amount ${amount.problem === 'too_precise' ? 'has more than 8 decimal places' : 'is not a decimal'}.`;
  if (amount.value === 0n) return 'amount must not be zero: negative is money out, positive money in.';
  if (amount.value > 10n ** 24n || amount.value < -(10n ** 24n))
    return 'amount must be between -1e16 and 1e16.';
  return amount.value;
}

/** Validates one row; the reason for a refusal is a sentence naming the field. */
export function validateRow(raw: unknown, index: number): Judgement {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    return refusal(index, 'A row must be an object.');
  const row = raw as Record<string, unknown>;
  const externalId = text(row, 'external_id', 1, 128);
  if (typeof externalId !== 'string') return refusal(index, externalId.problem);
  const accountKey = text(row, 'account_key', 1, 120);
  if (typeof accountKey !== 'string') return refusal(index, accountKey.problem, externalId);
  const currency = text(row, 'currency', 2, 12);
  if (typeof currency !== 'string') return refusal(index, currency.problem, externalId);
  const occurredOn = text(row, 'occurred_on', 10, 10);
  if (typeof occurredOn !== 'string') return refusal(index, occurredOn.problem, externalId);
  const payee = text(row, 'payee', 0, 200, '');
  if (typeof payee !== 'string') return refusal(index, payee.problem, externalId);
  const note = text(row, 'note', 0, 500, '');
  if (typeof note !== 'string') return refusal(index, note.problem, externalId);
  if (!CURRENCY_SHAPE.test(currency))
    return refusal(index, 'currency must be 2 to 12 letters or digits.', externalId);
  if (!isCalendarDate(occurredOn))
    return refusal(index, 'occurred_on must be a date (YYYY-MM-DD).', externalId);
  if (typeof row.amount !== 'number' && typeof row.amount !== 'string')
    return refusal(index, 'amount must be a decimal string or a number.', externalId);
  const amount = amountOf(row.amount);
  if (typeof amount === 'string') return refusal(index, amount, externalId);
  return {
    ok: true,
    row: { index, externalId, accountKey, currency: currency.toUpperCase(), occurredOn, amount, payee, note },
  };
}

/** The first row with an external_id books; a repeat within the same batch is a duplicate. */
export function splitRepeats(rows: PushRow[]): { first: PushRow[]; repeats: PushRow[] } {
  const seen = new Set<string>();
  const first: PushRow[] = [];
  const repeats: PushRow[] = [];
  for (const row of rows) {
    if (seen.has(row.externalId)) repeats.push(row);
    else {
      seen.add(row.externalId);
      first.push(row);
    }
  }
  return { first, repeats };
}

/** How many more rows the month allows; null allowance is unlimited. */
export function rowsLeft(allowance: number | null, used: number): number {
  return allowance === null ? Number.POSITIVE_INFINITY : Math.max(0, allowance - used);
}

export function monthOf(at: Date): string {
  return `${at.toISOString().slice(0, 7)}-01`;
}
