import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidJsonError, parseJsonBody } from './json-body.ts';

describe('parseJsonBody', () => {
  it('keeps a number a float would round as its exact decimal text', () => {
    const body = parseJsonBody('{"amount": 12345678901234.12345678, "n": 1}') as Record<string, unknown>;
    expect(body.amount).toBe('12345678901234.12345678');
    expect(body.n).toBe(1);
  });

  it('keeps exactly representable numbers as numbers on the slow path too', () => {
    const body = parseJsonBody('{"a": 0.1, "b": 1e3, "c": "12345678901234567"}') as Record<string, unknown>;
    expect(body).toEqual({ a: 0.1, b: 1000, c: '12345678901234567' });
  });

  it('spells a large exponent out exactly, and leaves a huge one as text the money grammar refuses', () => {
    const large = parseJsonBody('{"amount": 1e400}') as Record<string, unknown>;
    expect(large.amount).toBe(`1${'0'.repeat(400)}`);
    const huge = parseJsonBody('{"amount": 1e401}') as Record<string, unknown>;
    expect(huge.amount).toBe('1e401');
  });

  it('refuses empty bodies, broken JSON and prototype keys', () => {
    for (const text of [
      '',
      '   ',
      '{',
      '{"a":}',
      "{'a':1}",
      '{"__proto__": {"x": 1}}',
      '{"constructor": {"prototype": {}}}',
    ]) {
      expect(() => parseJsonBody(text)).toThrow(InvalidJsonError);
    }
  });

  it('refuses the NUL character in any string or key, naming where it stands', () => {
    expect(() => parseJsonBody('{"name": "a\\u0000b"}')).toThrow(InvalidJsonError);
    let thrown: unknown;
    try {
      parseJsonBody('{"list": [{"ok": "x"}, {"bad": "\\u0000"}]}');
    } catch (error) {
      thrown = error;
    }
    expect((thrown as InvalidJsonError).loc).toEqual(['list', 1, 'bad']);
    expect(() => parseJsonBody('{"a\\u0000": 1}')).toThrow(InvalidJsonError);
    expect(parseJsonBody('{"name": "a\\\\u0000"}')).toEqual({ name: 'a\\u0000' });
  });

  it('refuses nesting deeper than 64 levels, counting no brackets inside strings', () => {
    expect(() => parseJsonBody(`${'['.repeat(65)}${']'.repeat(65)}`)).toThrow(/deeper than 64/);
    expect(parseJsonBody(`${'['.repeat(64)}${']'.repeat(64)}`)).toBeTruthy();
    expect(parseJsonBody(`{"text": "${'['.repeat(200)}"}`)).toEqual({ text: '['.repeat(200) });
  });
});

describe('parseJsonBody: duplicate keys, surrogates and exact numbers', () => {
  const problemOf = (text: string) => {
    try {
      parseJsonBody(text);
    } catch (error) {
      const refusal = error as InvalidJsonError;
      return { type: refusal.type, loc: refusal.loc };
    }
    return undefined;
  };

  it('refuses a key given twice, however it is spelled, naming where it stands', () => {
    expect(problemOf('{"amount":"0.01","amount":"1000000"}')).toEqual({
      type: 'json_duplicate_key',
      loc: ['amount'],
    });
    expect(problemOf('{"lines":[{"a":1},{"a":1,"\\u0061":2}]}')).toEqual({
      type: 'json_duplicate_key',
      loc: ['lines', 1, 'a'],
    });
    // The same key in sibling objects is not a duplicate.
    expect(parseJsonBody('{"x":{"a":1},"y":{"a":2}}')).toEqual({ x: { a: 1 }, y: { a: 2 } });
  });

  it('refuses a duplicate key whether or not a long number is in the body', () => {
    expect(problemOf(`{"amount":1,"n":${'1'.repeat(40)},"amount":2}`)?.type).toBe('json_duplicate_key');
  });

  it('refuses half a surrogate pair in a value or a key, and keeps whole pairs', () => {
    for (const text of ['"\\ud800"', '"\\udfff"', '"a\\ud800b"', '"\\udc00\\ud800"', '"\\ud83d"']) {
      expect(problemOf(`{"name":${text}}`)).toEqual({ type: 'string_unicode', loc: ['name'] });
    }
    expect(problemOf('{"\\ud800":1}')).toEqual({ type: 'string_unicode', loc: ['\ud800'] });
    expect(parseJsonBody('{"e":"\\ud83d\\ude00","raw":"😀","rtl":"\\u202e","mark":"e\\u0301"}')).toEqual({
      e: '😀',
      raw: '😀',
      rtl: '\u202e',
      mark: 'e\u0301',
    });
  });

  it('reads what JSON.parse reads, for any value without long numbers', () => {
    const value = fc.jsonValue({ maxDepth: 5 }).filter((v) => !JSON.stringify(v).includes('__proto__'));
    fc.assert(
      fc.property(value, fc.constantFrom(0, 2), (json, indent) => {
        const text = JSON.stringify(json, null, indent);
        expect(parseJsonBody(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps any long decimal exactly, whatever its zeros, exponent or sign', () => {
    const decimal = fc
      .tuple(fc.boolean(), fc.stringMatching(/^[1-9]\d{0,30}$/), fc.stringMatching(/^\d{0,30}$/))
      .map(
        ([negative, whole, fraction]) => `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`,
      );
    fc.assert(
      fc.property(decimal, (text) => {
        const parsed = (parseJsonBody(`{"a":${text}}`) as { a: number | string }).a;
        // Either a float that spells the same number, or the exact text with zeros trimmed.
        const canonical = text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
        if (typeof parsed === 'number') expect(Number(canonical)).toBe(parsed);
        else expect(parsed).toBe(canonical === '-0' ? '0' : canonical);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses what the grammar refuses', () => {
    for (const text of [
      '01',
      '-',
      '1.',
      '.5',
      '1e',
      '+1',
      '[1,]',
      '{"a":1,}',
      '"\\x"',
      '"\\u12"',
      '"a\nb"',
      'nul',
      '1 2',
      'NaN',
    ]) {
      expect(problemOf(text)?.type, text).toBe('json_invalid');
    }
  });
});
