import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { blockingKeys, jaroWinkler, NameIndex, nameScore, prepareName, scoreCeiling } from './near.ts';

// Names from a few letters, so that random names share letters, prefixes and whole words often.
const word = fc.stringMatching(/^[aeiknrst]{1,9}$/);
const name = fc.array(word, { minLength: 1, maxLength: 4 });

describe('the ceiling that spares a candidate its scoring', () => {
  it('is never below the score it stands for', () => {
    fc.assert(
      fc.property(name, name, (a, b) => {
        const subject = prepareName(a);
        const listed = prepareName(b);
        expect(scoreCeiling(subject, listed)).toBeGreaterThanOrEqual(nameScore(subject, listed));
      }),
      { numRuns: 5_000 },
    );
  });

  it('is exact where the score is: the same words, or one side covering the other', () => {
    expect(scoreCeiling(prepareName(['ivan', 'petrov']), prepareName(['petrov', 'ivan']))).toBe(1);
    expect(scoreCeiling(prepareName(['jose', 'nunez']), prepareName(['jose', 'angel', 'nunez']))).toBe(1);
  });

  it('leaves Jaro–Winkler unchanged by the buffers it reuses, long strings after short', () => {
    expect(jaroWinkler('martha', 'marhta')).toBeCloseTo(0.9611, 4);
    expect(jaroWinkler('a'.repeat(300), `${'a'.repeat(299)}b`)).toBeGreaterThan(0.99);
    expect(jaroWinkler('dixon', 'dicksonx')).toBeCloseTo(0.8133, 4);
  });
});

describe('the index with the ceiling', () => {
  it('finds what scoring every candidate that shares a key would find', () => {
    fc.assert(
      fc.property(fc.array(name, { minLength: 1, maxLength: 40 }), name, (list, payee) => {
        const index = new NameIndex<number>();
        for (const [at, words] of list.entries()) index.add(words, at);
        const subject = prepareName(payee);
        const keys = new Set(blockingKeys(subject));
        // The index answers 1 at once for an entry written the same way (its exact keys).
        const exact = (listed: ReturnType<typeof prepareName>) =>
          listed.spaced === subject.spaced ||
          [listed.inOrder, listed.joined].some((form) => form === subject.inOrder || form === subject.joined);
        let best = 0;
        for (const words of list) {
          if (words.length === 0) continue;
          const listed = prepareName(words);
          if (exact(listed)) best = 1;
          else if (blockingKeys(listed).some((key) => keys.has(key)))
            best = Math.max(best, nameScore(subject, listed));
        }
        const hit = index.best(payee, 0.85);
        expect(hit?.score ?? 0).toBe(best >= 0.85 ? best : 0);
      }),
      { numRuns: 500 },
    );
  });
});
