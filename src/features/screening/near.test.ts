import { describe, expect, it } from 'vitest';
import { hasInvisible, nameWords, normalizeAddress, normalizeDestination, normalizeName } from './domain.ts';
import { jaroWinkler, NameIndex } from './near.ts';

const MIN_SCORE = 0.92;

function indexOf(names: string[]) {
  const index = new NameIndex<string>();
  for (const name of names) index.add(nameWords(name), name);
  return index;
}

const LIST = indexOf(['Ivan PETROV', 'AL QAIDA', 'Northwind Mixing Services Ltd.', 'José Ángel NÚÑEZ OCAÑA']);

describe('the evasion table: each written form is held against the listed name', () => {
  it.each([
    ['zero-width space', 'Ivan Pet\u200brov', 'Ivan PETROV'],
    ['soft hyphen', 'Ivan Pet\u00adrov', 'Ivan PETROV'],
    ['zero-width joiner', 'Ivan Pet\u200drov', 'Ivan PETROV'],
    ['zero-width non-joiner', 'Iv\u200can Petrov', 'Ivan PETROV'],
    ['word joiner', 'Ivan Pet\u2060rov', 'Ivan PETROV'],
    ['byte-order mark', '\ufeffIvan Petrov', 'Ivan PETROV'],
    ['left-to-right mark', 'Ivan\u200e Petrov', 'Ivan PETROV'],
    ['variation selector', 'Iva\ufe0fn Petrov', 'Ivan PETROV'],
    ['Mongolian vowel separator', 'Ivan Petr\u180eov', 'Ivan PETROV'],
    ['Cyrillic look-alikes', 'Iv\u0430n P\u0435trov', 'Ivan PETROV'],
    ['Greek look-alikes', 'Ivan \u03a1etr\u03bfv', 'Ivan PETROV'],
    ['fullwidth letters', '\uff29\uff56\uff41\uff4e \uff30\uff45\uff54\uff52\uff4f\uff56', 'Ivan PETROV'],
    ['mathematical bold', '\ud835\udc08\ud835\udc2f\ud835\udc1a\ud835\udc27 Petrov', 'Ivan PETROV'],
    ['accents', 'Ívan Pétrov', 'Ivan PETROV'],
    ['word order', 'PETROV, Ivan', 'Ivan PETROV'],
    ['a legal form added', 'Ivan Petrov LLC', 'Ivan PETROV'],
    ['a dotted legal form added', 'Ivan Petrov S.A.R.L.', 'Ivan PETROV'],
    ['two legal forms added', 'Ivan Petrov Co., Ltd', 'Ivan PETROV'],
    ['a legal form removed', 'Northwind Mixing Services', 'Northwind Mixing Services Ltd.'],
    ['a different legal form', 'Northwind Mixing Services GmbH', 'Northwind Mixing Services Ltd.'],
    ['a joined word', 'AlQaida', 'AL QAIDA'],
    ['a hyphen', 'Al-Qaida', 'AL QAIDA'],
    ['a missing middle name', 'Jose Nunez Ocana', 'José Ángel NÚÑEZ OCAÑA'],
    ['a missing second surname', 'José Ángel Núñez', 'José Ángel NÚÑEZ OCAÑA'],
    ['a one-letter misspelling', 'Ivan Petrof', 'Ivan PETROV'],
    ['a doubled letter', 'Ivan Pettrov', 'Ivan PETROV'],
    ['German sharp s folded', 'Northwind Mixing Servicess', 'Northwind Mixing Services Ltd.'],
  ])('%s: %j', (_, written, listed) => {
    const hit = LIST.best(nameWords(written), MIN_SCORE);
    expect(hit?.entry).toBe(listed);
    expect(hit!.score).toBeGreaterThanOrEqual(MIN_SCORE);
  });

  it.each([
    ['another person with a similar first name and patronymic', 'Ivan Petrovich Sidorov'],
    ['a lone first name', 'Ivan'],
    ['a different surname', 'Ivan Pavlov'],
    ['a name that only begins alike', 'Petra Ivanova'],
    ['an unrelated company', 'Northern Lights Bakery Ltd'],
    ['a word shared with nothing else', 'Qaida Bakery'],
  ])('%s: %j passes', (_, written) => {
    expect(LIST.best(nameWords(written), MIN_SCORE)).toBeUndefined();
  });
});

describe('the normal forms', () => {
  it('folds names: invisible characters first, then width, case, look-alikes and accents', () => {
    expect(normalizeName('  NÚÑEZ,\u200b  José ')).toBe('nunez jose');
    expect(normalizeName('STRAßE')).toBe('strasse');
    expect(normalizeName('ООО Ромашка')).not.toContain('ooo');
    expect(normalizeName('LLC')).toBe('llc');
  });

  it('compares hex addresses without their checksum case and refuses none silently', () => {
    const address = '0x7F367cC41522cE07553e823bf3be79A889DEbe1B';
    expect(normalizeAddress(` ${address}\n`)).toBe(address.toLowerCase());
    expect(normalizeAddress('bc1QAbc')).toBe('bc1QAbc');
    expect(hasInvisible(`0x7F36\u200b7cC4`)).toBe(true);
    expect(hasInvisible(address)).toBe(false);
  });

  it('folds a blocked destination as names are: IBAN groups, invisible characters, look-alikes', () => {
    const blocked = normalizeDestination('DE89 3704 0044 0532 0130 00');
    expect(normalizeDestination('de89370400440532013000')).toBe(blocked);
    expect(normalizeDestination('DE89\u200b 3704 0044 0532 0130 00')).toBe(blocked);
    expect(normalizeDestination('Iv\u0430n Pet\u00adrov')).toBe(normalizeDestination('ivan petrov'));
  });

  it('scores Jaro–Winkler as published (MARTHA/MARHTA 0.961, DIXON/DICKSONX 0.813)', () => {
    expect(jaroWinkler('martha', 'marhta')).toBeCloseTo(0.961, 3);
    expect(jaroWinkler('dixon', 'dicksonx')).toBeCloseTo(0.813, 3);
    expect(jaroWinkler('abc', 'abc')).toBe(1);
    expect(jaroWinkler('abc', 'xyz')).toBe(0);
  });
});
