import { describe, expect, it } from 'vitest';
import { findRegexes, judgeRegex, unsafeRegexes } from '../scripts/lint-regex.ts';

// Every regular expression in src/ matches in linear time (checked by recheck, as
// `npm run lint` does): a request can hand any of them a megabyte of its choosing.

describe('regular expressions in src/', () => {
  it('finds the literals, RegExp sources and schema patterns it is meant to check', () => {
    const found = findRegexes();
    expect(found.length).toBeGreaterThan(30);
    expect(found.some((regex) => regex.file.startsWith('src/features/') && regex.flags === 'u')).toBe(true);
  });

  it('tells a backtracking expression from a linear one', () => {
    const at = { file: 'x.ts', line: 1, flags: '' };
    expect(judgeRegex({ ...at, source: '0+$' }).status).toBe('vulnerable');
    expect(judgeRegex({ ...at, source: '(a+)+$' }).status).toBe('vulnerable');
    expect(judgeRegex({ ...at, source: '^[0-9a-f]{64}$' }).status).toBe('safe');
  });

  it('has none that can backtrack', { timeout: 180_000 }, () => {
    const problems = unsafeRegexes().map(
      (p) => `${p.file}:${p.line} /${p.source}/${p.flags} ${p.status} ${p.complexity}`,
    );
    expect(problems).toEqual([]);
  });
});
