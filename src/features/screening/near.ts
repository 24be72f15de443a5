// Near matching of names, with no I/O: Jaro–Winkler over token sets, and the in-memory index that
// finds the few list entries worth scoring (token blocking) instead of scoring every entry.

/** Jaro–Winkler similarity of two strings, in [0, 1] (prefix scale 0.1, prefix of at most 4). */
export function jaroWinkler(a: string, b: string): number {
  if (a === b) return 1;
  const la = a.length;
  const lb = b.length;
  if (la === 0 || lb === 0) return 0;
  const window = Math.max(0, Math.floor(Math.max(la, lb) / 2) - 1);
  const takenA = new Uint8Array(la);
  const takenB = new Uint8Array(lb);
  let matches = 0;
  for (let i = 0; i < la; i++) {
    const from = Math.max(0, i - window);
    const to = Math.min(lb - 1, i + window);
    for (let j = from; j <= to; j++) {
      if (takenB[j] === 1 || a.charCodeAt(i) !== b.charCodeAt(j)) continue;
      takenA[i] = 1;
      takenB[j] = 1;
      matches += 1;
      break;
    }
  }
  if (matches === 0) return 0;
  let halfTranspositions = 0;
  let j = 0;
  for (let i = 0; i < la; i++) {
    if (takenA[i] === 0) continue;
    while (takenB[j] === 0) j += 1;
    if (a.charCodeAt(i) !== b.charCodeAt(j)) halfTranspositions += 1;
    j += 1;
  }
  const m = matches;
  const jaro = (m / la + m / lb + (m - halfTranspositions / 2) / m) / 3;
  let prefix = 0;
  while (prefix < 4 && prefix < la && prefix < lb && a.charCodeAt(prefix) === b.charCodeAt(prefix))
    prefix += 1;
  return jaro + prefix * 0.1 * (1 - jaro);
}

/** A name prepared for scoring: its words (as written and sorted) and their joined forms. */
export type PreparedName = {
  words: string[];
  sorted: string[];
  spaced: string;
  joined: string;
  inOrder: string;
};

export function prepareName(words: readonly string[]): PreparedName {
  const sorted = [...new Set(words)].sort();
  return {
    words: [...words],
    sorted,
    spaced: sorted.join(' '),
    joined: sorted.join(''),
    inOrder: words.join(''),
  };
}

/** A single listed word covers a name only when it is this long ("Hamas" does, "Ali" does not). */
const SINGLE_WORD_COVER_MIN = 4;

/**
 * How alike a payee's name and a listed name are, in [0, 1]: the best of
 * - the words they share against all words of either (1 when every word of one side is among the
 *   other's: word order and a missing middle name; counted only when the shared words are two or
 *   more, or are the whole listed name of one long word, so a lone first name matches nothing);
 * - Jaro–Winkler of the two sorted names (misspellings);
 * - Jaro–Winkler of the two names with their spaces removed, sorted and as written (a joined word:
 *   "AlQaida" is "Al Qaida").
 */
export function nameScore(subject: PreparedName, listed: PreparedName): number {
  if (subject.spaced === listed.spaced || subject.inOrder === listed.inOrder) return 1;
  const listedWords = new Set(listed.sorted);
  const shared = subject.sorted.filter((word) => listedWords.has(word));
  const listedCovered = shared.length === listed.sorted.length;
  const subjectCovered = shared.length === subject.sorted.length;
  const coverCounts =
    shared.length >= 2 ||
    (listedCovered && shared.length === 1 && (shared[0]?.length ?? 0) >= SINGLE_WORD_COVER_MIN);
  if (coverCounts && (listedCovered || subjectCovered)) return 1;
  return Math.max(
    jaroWinkler(subject.spaced, listed.spaced),
    jaroWinkler(subject.joined, listed.joined),
    jaroWinkler(subject.inOrder, listed.inOrder),
  );
}

/** The blocking keys of a name: each word's first three letters, and the joined name's. */
export function blockingKeys(name: PreparedName): string[] {
  const keys = new Set<string>();
  for (const word of name.sorted) keys.add(word.slice(0, 3));
  keys.add(name.joined.slice(0, 3));
  keys.add(name.inOrder.slice(0, 3));
  return [...keys];
}

export type NearHit<T> = { entry: T; score: number };

type Indexed<T> = { name: PreparedName; entry: T };

/**
 * The names of a list, indexed by blocking key: a payee's name is scored only against entries
 * that share a key with it. A near match that shares no key (every word misspelt within its first
 * three letters) is not found; docs/design/screening.md states this bound.
 */
export class NameIndex<T> {
  /** The entries by blocking key and by exact spelling; an entry keeps its prepared name beside it. */
  private readonly byKey = new Map<string, Indexed<T>[]>();
  private readonly exact = new Map<string, Indexed<T>>();
  private count = 0;

  add(words: readonly string[], entry: T) {
    if (words.length === 0) return;
    const indexed = { name: prepareName(words), entry };
    this.count += 1;
    for (const key of [indexed.name.spaced, `#${indexed.name.inOrder}`, `#${indexed.name.joined}`]) {
      if (!this.exact.has(key)) this.exact.set(key, indexed);
    }
    for (const key of blockingKeys(indexed.name)) {
      let bucket = this.byKey.get(key);
      if (!bucket) {
        bucket = [];
        this.byKey.set(key, bucket);
      }
      bucket.push(indexed);
    }
  }

  get size() {
    return this.count;
  }

  /** The best entry scoring at least `minScore` against the name, or undefined. */
  best(words: readonly string[], minScore: number): NearHit<T> | undefined {
    if (words.length === 0) return undefined;
    const subject = prepareName(words);
    for (const key of [subject.spaced, `#${subject.inOrder}`, `#${subject.joined}`]) {
      const found = this.exact.get(key);
      if (found !== undefined) return { entry: found.entry, score: 1 };
    }
    let best: NearHit<T> | undefined;
    const scored = new Set<Indexed<T>>();
    for (const key of blockingKeys(subject)) {
      for (const candidate of this.byKey.get(key) ?? []) {
        if (scored.has(candidate)) continue;
        scored.add(candidate);
        const score = nameScore(subject, candidate.name);
        if (score >= minScore && (best === undefined || score > best.score)) {
          best = { entry: candidate.entry, score };
        }
      }
    }
    return best;
  }
}
