import { parse as parseLossless } from 'lossless-json';
import secureJson from 'secure-json-parse';
import { expandExponent } from '../../core/money.ts';

// JSON.parse turns 12345678901234.12345678 into a nearby binary float: money silently rounded.
// Numbers that a float cannot carry exactly are kept as their decimal text instead, so the money
// parser sees exactly what was sent; every other number stays a JS number.

// A float holds any decimal of up to 15 significant digits exactly. Bodies without a run of 16
// digits or an exponent take the fast native path.
const MAYBE_INEXACT = /\d[\d.]{15}|\d[eE][+-]?\d/;
const MAX_EXPONENT_EXPANSION = 400;

function normalizeDecimal(text: string): string {
  const negative = text.startsWith('-');
  const unsigned = text.replace(/^[+-]/, '');
  const [whole = '', fraction = ''] = unsigned.split('.');
  const trimmedWhole = whole.replace(/^0+(?=\d)/, '');
  const trimmedFraction = fraction.replace(/0+$/, '');
  const body = trimmedFraction.length > 0 ? `${trimmedWhole}.${trimmedFraction}` : trimmedWhole;
  return negative && body !== '0' ? `-${body}` : body;
}

function exponentOf(source: string): number {
  const match = /[eE]([+-]?\d+)$/.exec(source);
  return match ? Math.abs(Number(match[1])) : 0;
}

function numberFromSource(source: string): number | string {
  const value = Number(source);
  if (exponentOf(source) > MAX_EXPONENT_EXPANSION) return source;
  const exact = normalizeDecimal(expandExponent(source));
  if (Number.isFinite(value) && normalizeDecimal(expandExponent(String(value))) === exact) return value;
  return exact;
}

export class InvalidJsonError extends Error {
  readonly loc: (string | number)[];
  constructor(message: string, loc: (string | number)[] = []) {
    super(message);
    this.name = 'InvalidJsonError';
    this.loc = loc;
  }
}

// PostgreSQL text cannot hold the NUL character, and no field of ours has a use for it, so it
// is refused where it stands instead of failing deep in a query.
function findNul(value: unknown, path: (string | number)[], depth = 0): (string | number)[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (value === null || typeof value !== 'object' || depth > 64) return null;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = findNul(value[index], [...path, index], depth + 1);
      if (found) return found;
    }
    return null;
  }
  for (const [key, child] of Object.entries(value)) {
    if (key.includes('\u0000')) return [...path, key];
    const found = findNul(child, [...path, key], depth + 1);
    if (found) return found;
  }
  return null;
}

/** No body of ours nests this deep; deeper ones would only exhaust recursive walkers. */
export const NESTING_MAX = 64;

/** The deepest nesting of arrays and objects, ignoring brackets inside strings. */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 92)
        index++; // a backslash escapes the next character
      else if (code === 34) inString = false;
    } else if (code === 34) inString = true;
    else if (code === 91 || code === 123) deepest = Math.max(deepest, ++depth);
    else if (code === 93 || code === 125) depth--;
  }
  return deepest;
}

/** Parses a request body exactly, refusing prototype-poisoning keys and absurd nesting. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') throw new InvalidJsonError('The body is empty; send a JSON object.');
  if (nestingDepth(text) > NESTING_MAX) {
    throw new InvalidJsonError(`The body nests arrays and objects deeper than ${NESTING_MAX} levels.`);
  }
  let value: unknown;
  try {
    value = MAYBE_INEXACT.test(text) ? parseLossless(text, null, numberFromSource) : JSON.parse(text);
  } catch (error) {
    throw new InvalidJsonError(`The body is not valid JSON: ${(error as Error).message}`);
  }
  try {
    if (value !== null && typeof value === 'object')
      secureJson.scan(value as Record<string, unknown>, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    throw new InvalidJsonError('The body uses a reserved key (__proto__ or constructor.prototype).');
  }
  const nulAt = text.includes('\\u0000') ? findNul(value, []) : null;
  if (nulAt) throw new InvalidJsonError('Text may not contain the NUL character (\\u0000).', nulAt);
  return value;
}
