// The one reader of request bodies. A hand-written single-pass parser, so every rule is applied
// while the text is read and every step is linear in the body's length (a 1 MiB body of the
// worst shape takes milliseconds, never seconds):
// - numbers a float cannot carry exactly are kept as their exact decimal text, so the money
//   parser sees what was sent (JSON.parse would turn 12345678901234.12345678 into a nearby float);
// - a key given twice in one object is refused (`json_duplicate_key`), never "last one wins";
// - a string holding half of a UTF-16 surrogate pair is refused (`string_unicode`): PostgreSQL
//   cannot store it, and two identifiers differing only by one would otherwise collide;
// - the NUL character, prototype-poisoning keys and nesting deeper than NESTING_MAX are refused.

export type JsonProblem = 'json_invalid' | 'json_duplicate_key' | 'string_unicode';

export class InvalidJsonError extends Error {
  readonly loc: (string | number)[];
  readonly type: JsonProblem;
  constructor(message: string, loc: (string | number)[] = [], type: JsonProblem = 'json_invalid') {
    super(message);
    this.name = 'InvalidJsonError';
    this.loc = loc;
    this.type = type;
  }
}

/** No body of ours nests this deep; deeper ones would only exhaust recursive walkers. */
export const NESTING_MAX = 64;
/** Exponents beyond this are left as text (the money grammar refuses them): no huge expansions. */
const EXPONENT_EXPANSION_MAX = 400;
/** Up to this many digits (and no exponent), a decimal is carried exactly by a float. */
const FLOAT_EXACT_DIGITS = 15;

const QUOTE = 34;
const BACKSLASH = 92;
const ESCAPES: Record<number, string> = {
  34: '"',
  92: '\\',
  47: '/',
  98: '\b',
  102: '\f',
  110: '\n',
  114: '\r',
  116: '\t',
};

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** The UTF-16 unit spelled by four hex digits at `at`, or -1 when they are not four hex digits. */
function hexUnit(text: string, at: number): number {
  let unit = 0;
  for (let index = at; index < at + 4; index++) {
    const code = text.charCodeAt(index);
    const digit =
      code >= 48 && code <= 57
        ? code - 48
        : code >= 97 && code <= 102
          ? code - 87
          : code >= 65 && code <= 70
            ? code - 55
            : -1;
    if (digit < 0) return -1;
    unit = unit * 16 + digit;
  }
  return unit;
}

/** True when the text holds a high surrogate without its low half, or a low one alone. */
export function hasLoneSurrogate(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0xd800 || code > 0xdfff) continue;
    if (code >= 0xdc00) return true;
    const next = text.charCodeAt(index + 1);
    if (!(next >= 0xdc00 && next <= 0xdfff)) return true;
    index++;
  }
  return false;
}

/**
 * The canonical positional spelling of `digits` with the decimal point `pointAt` digits from
 * its start: no leading or trailing zeros, "0" for zero. Found with two index scans (linear).
 */
export function canonicalDecimal(negative: boolean, digits: string, pointAt: number): string {
  let first = 0;
  while (first < digits.length && digits.charCodeAt(first) === 48) first++;
  if (first === digits.length) return '0';
  let last = digits.length - 1;
  while (digits.charCodeAt(last) === 48) last--;
  const significant = digits.slice(first, last + 1);
  let body: string;
  if (pointAt <= first) body = `0.${'0'.repeat(first - pointAt)}${significant}`;
  else if (pointAt > last) body = `${significant}${'0'.repeat(pointAt - last - 1)}`;
  else body = `${significant.slice(0, pointAt - first)}.${significant.slice(pointAt - first)}`;
  return negative ? `-${body}` : body;
}

/** JavaScript's own spelling of a float ("1e+21", "1.5e-7", "0.1") in canonical form. */
function canonicalOfFloat(value: number): string {
  const text = String(Math.abs(value));
  const e = text.indexOf('e');
  const mantissa = e < 0 ? text : text.slice(0, e);
  const exponent = e < 0 ? 0 : Number(text.slice(e + 1));
  const point = mantissa.indexOf('.');
  const whole = point < 0 ? mantissa : mantissa.slice(0, point);
  const fraction = point < 0 ? '' : mantissa.slice(point + 1);
  return canonicalDecimal(value < 0, whole + fraction, whole.length + exponent);
}

type NumberParts = { negative: boolean; whole: string; fraction: string; exponent: number | null };

/** A JSON number: a JS number when a float holds it exactly, else its exact decimal text. */
function numberValue(source: string, parts: NumberParts): number | string {
  const digitCount = parts.whole.length + parts.fraction.length;
  if (parts.exponent === null && digitCount <= FLOAT_EXACT_DIGITS) return Number(source);
  const exponent = parts.exponent ?? 0;
  if (Math.abs(exponent) > EXPONENT_EXPANSION_MAX) return source;
  const exact = canonicalDecimal(parts.negative, parts.whole + parts.fraction, parts.whole.length + exponent);
  const value = Number(source);
  if (Number.isFinite(value) && canonicalOfFloat(value) === exact) return value;
  return exact;
}

class Reader {
  private index = 0;
  /** Where the value being read stands, as the 422 `loc` names it. */
  private readonly path: (string | number)[] = [];

  constructor(private readonly text: string) {}

  private fail(what: string): never {
    const found = this.index < this.text.length ? `'${this.text[this.index]}'` : 'the end of the body';
    throw new InvalidJsonError(
      `The body is not valid JSON: ${what}, found ${found} at position ${this.index}.`,
    );
  }

  private skipSpace(): void {
    const text = this.text;
    let index = this.index;
    for (;;) {
      const code = text.charCodeAt(index);
      if (code === 32 || code === 9 || code === 10 || code === 13) index++;
      else break;
    }
    this.index = index;
  }

  readDocument(): unknown {
    this.skipSpace();
    if (this.index >= this.text.length) throw new InvalidJsonError('The body is empty; send a JSON object.');
    const value = this.readValue(0);
    this.skipSpace();
    if (this.index < this.text.length) this.fail('expected the end of the body');
    return value;
  }

  private readValue(depth: number): unknown {
    this.skipSpace();
    const code = this.text.charCodeAt(this.index);
    if (code === 123) return this.readObject(depth + 1);
    if (code === 91) return this.readArray(depth + 1);
    if (code === QUOTE) return this.readString(false);
    if (code === 45 || isDigit(code)) return this.readNumber();
    for (const [word, value] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (this.text.startsWith(word, this.index)) {
        this.index += word.length;
        return value;
      }
    }
    return this.fail('expected a value');
  }

  private enter(depth: number): void {
    if (depth > NESTING_MAX)
      throw new InvalidJsonError(`The body nests arrays and objects deeper than ${NESTING_MAX} levels.`);
    this.index++;
    this.skipSpace();
  }

  private readObject(depth: number): Record<string, unknown> {
    this.enter(depth);
    const record: Record<string, unknown> = {};
    if (this.text.charCodeAt(this.index) === 125) {
      this.index++;
      return record;
    }
    for (;;) {
      if (this.text.charCodeAt(this.index) !== QUOTE) this.fail('expected a key in double quotes');
      const key = this.readString(true);
      if (key === '__proto__')
        throw new InvalidJsonError('The body uses a reserved key (__proto__ or constructor.prototype).');
      if (Object.hasOwn(record, key)) {
        throw new InvalidJsonError(
          `The key "${key}" appears twice in one object; send each key once.`,
          [...this.path, key],
          'json_duplicate_key',
        );
      }
      this.skipSpace();
      if (this.text.charCodeAt(this.index) !== 58) this.fail("expected ':' after a key");
      this.index++;
      this.path.push(key);
      const value = this.readValue(depth);
      this.path.pop();
      if (
        key === 'constructor' &&
        value !== null &&
        typeof value === 'object' &&
        Object.hasOwn(value, 'prototype')
      )
        throw new InvalidJsonError('The body uses a reserved key (__proto__ or constructor.prototype).');
      record[key] = value;
      if (this.endOfList(125)) return record;
      this.skipSpace();
    }
  }

  private readArray(depth: number): unknown[] {
    this.enter(depth);
    const list: unknown[] = [];
    if (this.text.charCodeAt(this.index) === 93) {
      this.index++;
      return list;
    }
    for (;;) {
      this.path.push(list.length);
      list.push(this.readValue(depth));
      this.path.pop();
      if (this.endOfList(93)) return list;
    }
  }

  /** After an item: a comma (more follow) or the closing bracket (true). */
  private endOfList(closing: number): boolean {
    this.skipSpace();
    const code = this.text.charCodeAt(this.index);
    this.index++;
    if (code === 44) return false;
    if (code === closing) return true;
    this.index--;
    return this.fail(`expected ',' or '${String.fromCharCode(closing)}'`);
  }

  private readString(isKey: boolean): string {
    const text = this.text;
    let index = this.index + 1;
    let chunkStart = index;
    let result = '';
    let surrogates = false;
    let nul = false;
    for (;;) {
      const code = text.charCodeAt(index);
      if (code === QUOTE) break;
      if (Number.isNaN(code)) {
        this.index = index;
        this.fail('expected the closing quote of a string');
      }
      if (code < 0x20) {
        this.index = index;
        this.fail('expected no raw control character inside a string (escape it)');
      }
      if (code >= 0xd800 && code <= 0xdfff) surrogates = true;
      if (code !== BACKSLASH) {
        index++;
        continue;
      }
      result += text.slice(chunkStart, index);
      const escaped = text.charCodeAt(index + 1);
      const simple = ESCAPES[escaped];
      if (simple !== undefined) {
        result += simple;
        index += 2;
      } else if (escaped === 117) {
        const unit = hexUnit(text, index + 2);
        if (unit < 0) {
          this.index = index;
          this.fail('expected four hex digits after \\u');
        }
        if (unit === 0) nul = true;
        if (unit >= 0xd800 && unit <= 0xdfff) surrogates = true;
        result += String.fromCharCode(unit);
        index += 6;
      } else {
        this.index = index;
        this.fail('expected a valid escape after a backslash');
      }
      chunkStart = index;
    }
    result += text.slice(chunkStart, index);
    this.index = index + 1;
    if (nul)
      throw new InvalidJsonError(
        'Text may not contain the NUL character (\\u0000).',
        this.locOf(isKey, result),
      );
    if (surrogates && hasLoneSurrogate(result)) {
      throw new InvalidJsonError(
        'Text may not contain half of a UTF-16 surrogate pair (a lone \\ud800-\\udfff); send whole characters.',
        this.locOf(isKey, result),
        'string_unicode',
      );
    }
    return result;
  }

  private locOf(isKey: boolean, key: string): (string | number)[] {
    return isKey ? [...this.path, key] : [...this.path];
  }

  private readDigits(): string {
    const start = this.index;
    while (isDigit(this.text.charCodeAt(this.index))) this.index++;
    if (this.index === start) this.fail('expected a digit');
    return this.text.slice(start, this.index);
  }

  private readNumber(): number | string {
    const start = this.index;
    const negative = this.text.charCodeAt(this.index) === 45;
    if (negative) this.index++;
    if (this.text.charCodeAt(this.index) === 48 && isDigit(this.text.charCodeAt(this.index + 1)))
      this.fail('expected no leading zero in a number');
    const whole = this.readDigits();
    let fraction = '';
    let exponent: number | null = null;
    if (this.text.charCodeAt(this.index) === 46) {
      this.index++;
      fraction = this.readDigits();
    }
    const marker = this.text.charCodeAt(this.index);
    if (marker === 101 || marker === 69) {
      this.index++;
      const sign = this.text.charCodeAt(this.index);
      if (sign === 43 || sign === 45) this.index++;
      const magnitude = Number(this.readDigits());
      exponent = sign === 45 ? -magnitude : magnitude;
    }
    return numberValue(this.text.slice(start, this.index), { negative, whole, fraction, exponent });
  }
}

/** Parses a request body exactly, refusing what JSON allows and we do not (see the top). */
export function parseJsonBody(text: string): unknown {
  return new Reader(text).readDocument();
}
