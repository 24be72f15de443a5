import { parse as parseLossless } from 'lossless-json';
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

type Flaw = { kind: 'deep' | 'reserved' } | { kind: 'nul'; loc: (string | number)[] };

/**
 * One walk over a parsed body for what JSON allows and we refuse: nesting deeper than
 * NESTING_MAX, the prototype-poisoning keys (`__proto__`, `constructor.prototype`) and, when the
 * text has one, the NUL character, which PostgreSQL text cannot hold (found with where it stands).
 */
function flawOf(value: unknown, path: (string | number)[], findNul: boolean): Flaw | null {
  if (typeof value === 'string')
    return findNul && value.includes('\u0000') ? { kind: 'nul', loc: [...path] } : null;
  if (value === null || typeof value !== 'object') return null;
  if (path.length >= NESTING_MAX) return { kind: 'deep' };
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      path.push(index);
      const flaw = flawOf(value[index], path, findNul);
      path.pop();
      if (flaw) return flaw;
    }
    return null;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key === '__proto__') return { kind: 'reserved' };
    const child = record[key];
    if (
      key === 'constructor' &&
      child !== null &&
      typeof child === 'object' &&
      Object.hasOwn(child, 'prototype')
    )
      return { kind: 'reserved' };
    path.push(key);
    const flaw =
      findNul && key.includes('\u0000')
        ? { kind: 'nul' as const, loc: [...path] }
        : flawOf(child, path, findNul);
    path.pop();
    if (flaw) return flaw;
  }
  return null;
}

const deepError = () =>
  new InvalidJsonError(`The body nests arrays and objects deeper than ${NESTING_MAX} levels.`);

/** Parses a request body exactly, refusing prototype-poisoning keys and absurd nesting. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') throw new InvalidJsonError('The body is empty; send a JSON object.');
  const inexact = MAYBE_INEXACT.test(text);
  // The exact parser recurses, so deep text is refused before it starts; JSON.parse does not.
  if (inexact && nestingDepth(text) > NESTING_MAX) throw deepError();
  let value: unknown;
  try {
    value = inexact ? parseLossless(text, null, numberFromSource) : JSON.parse(text);
  } catch (error) {
    throw new InvalidJsonError(`The body is not valid JSON: ${(error as Error).message}`);
  }
  const flaw = flawOf(value, [], text.includes('\\u0000'));
  if (flaw?.kind === 'deep') throw deepError();
  if (flaw?.kind === 'reserved')
    throw new InvalidJsonError('The body uses a reserved key (__proto__ or constructor.prototype).');
  if (flaw?.kind === 'nul')
    throw new InvalidJsonError('Text may not contain the NUL character (\\u0000).', flaw.loc);
  return value;
}
