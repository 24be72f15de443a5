import { describe, expect, it } from 'vitest';
import { uuidv7 } from './crypto.ts';

describe('uuidv7', () => {
  it('spells an RFC 9562 version-7 id with the time in its first 48 bits', () => {
    const at = Date.UTC(2026, 10, 22, 8, 0, 0, 123);
    const id = uuidv7(at);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
  });

  it('never repeats across many pool refills, and sorts in time order', () => {
    const ids = Array.from({ length: 20_000 }, (_, index) =>
      uuidv7(1_700_000_000_000 + Math.floor(index / 100)),
    );
    expect(new Set(ids).size).toBe(ids.length);
    const prefixes = ids.map((id) => id.slice(0, 13));
    expect([...prefixes].sort()).toEqual(prefixes);
  });

  it('spreads the random bits (each hex digit of the tail takes many values)', () => {
    const tails = Array.from({ length: 2000 }, () => uuidv7(0).slice(24));
    for (let position = 0; position < 12; position++) {
      expect(new Set(tails.map((tail) => tail[position])).size).toBe(16);
    }
  });
});
