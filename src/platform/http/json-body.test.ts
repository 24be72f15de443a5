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
