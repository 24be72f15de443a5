// Near matching of names, with no I/O: Jaro–Winkler over token sets, and the in-memory index that
// finds the few list entries worth scoring (token blocking) instead of scoring every entry. A
// candidate is scored only when a ceiling computed from letter counts says it could reach the
// threshold (`scoreCeiling`); the ceiling is never below the score, so it drops no match.

/** The window and flags of one Jaro comparison, grown as longer strings come: no allocation per call. */
let takenA = new Uint8Array(64);
let takenB = new Uint8Array(64);

function scratch(la: number, lb: number) {
  if (takenA.length < la) takenA = new Uint8Array(la * 2);
  if (takenB.length < lb) takenB = new Uint8Array(lb * 2);
  takenA.fill(0, 0, la);
  takenB.fill(0, 0, lb);
}

/** Jaro–Winkler similarity of two strings, in [0, 1] (prefix scale 0.1, prefix of at most 4). */
export function jaroWinkler(a: string, b: string): number {
  if (a === b) return 1;
  const la = a.length;
  const lb = b.length;
  if (la === 0 || lb === 0) return 0;
  const window = Math.max(0, Math.floor(Math.max(la, lb) / 2) - 1);
  scratch(la, lb);
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
  return withPrefix(jaro, commonPrefix(a, b));
}

function commonPrefix(a: string, b: string): number {
  let prefix = 0;
  while (
    prefix < 4 &&
    prefix < a.length &&
    prefix < b.length &&
    a.charCodeAt(prefix) === b.charCodeAt(prefix)
  )
    prefix += 1;
  return prefix;
}

const withPrefix = (jaro: number, prefix: number) => jaro + prefix * 0.1 * (1 - jaro);

/** Buckets of a letter count: a code unit counts in bucket `code % LETTER_BUCKETS`. */
const LETTER_BUCKETS = 64;

/** How many times each letter (by bucket) occurs in a string, spaces left out. */
function letterCounts(text: string): Uint8Array {
  const counts = new Uint8Array(LETTER_BUCKETS);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 32) continue;
    const bucket = code % LETTER_BUCKETS;
    const count = counts[bucket] ?? 0;
    if (count < 255) counts[bucket] = count + 1;
  }
  return counts;
}

/**
 * How many letters two strings can have in common at most: the overlap of their counts. Jaro's
 * matches are pairs of equal letters, each letter used once, so they are never more than this
 * (letters sharing a bucket, and counts capped at 255, only make it larger).
 */
function sharedAtMost(a: Uint8Array, b: Uint8Array): number {
  let shared = 0;
  for (let bucket = 0; bucket < LETTER_BUCKETS; bucket++) shared += Math.min(a[bucket] ?? 0, b[bucket] ?? 0);
  return shared;
}

/** The highest Jaro–Winkler two strings of these lengths, common prefix and shared letters can have. */
function jaroWinklerAtMost(la: number, lb: number, shared: number, prefix: number): number {
  if (la === 0 || lb === 0) return 0;
  const m = Math.min(shared, la, lb);
  if (m === 0) return 0;
  // The transposition term (m − t/2)/m is at most 1.
  return withPrefix((m / la + m / lb + 1) / 3, prefix);
}

/** A name prepared for scoring: its words (as written and sorted), their joined forms and letter counts. */
export type PreparedName = {
  words: string[];
  sorted: string[];
  wordSet: ReadonlySet<string>;
  spaced: string;
  joined: string;
  inOrder: string;
  /** Letters of `joined` (the sorted words without spaces) and of `inOrder` (as written, repeats kept). */
  joinedLetters: Uint8Array;
  inOrderLetters: Uint8Array;
};

export function prepareName(words: readonly string[]): PreparedName {
  const wordSet = new Set(words);
  const sorted = [...wordSet].sort();
  const joined = sorted.join('');
  const inOrder = words.join('');
  const joinedLetters = letterCounts(joined);
  return {
    words: [...words],
    sorted,
    wordSet,
    spaced: sorted.join(' '),
    joined,
    inOrder,
    joinedLetters,
    inOrderLetters: wordSet.size === words.length ? joinedLetters : letterCounts(inOrder),
  };
}

/** A single listed word covers a name only when it is this long ("Hamas" does, "Ali" does not). */
const SINGLE_WORD_COVER_MIN = 4;

/** 1 when the words they share cover one side (see nameScore), else 0. */
function coverScore(subject: PreparedName, listed: PreparedName): number {
  let shared = 0;
  let sharedLength = 0;
  for (const word of subject.sorted) {
    if (!listed.wordSet.has(word)) continue;
    shared += 1;
    sharedLength = word.length;
  }
  const listedCovered = shared === listed.sorted.length;
  const subjectCovered = shared === subject.sorted.length;
  const coverCounts = shared >= 2 || (listedCovered && shared === 1 && sharedLength >= SINGLE_WORD_COVER_MIN);
  return coverCounts && (listedCovered || subjectCovered) ? 1 : 0;
}

/**
 * A ceiling on `nameScore(subject, listed)` from letter counts, lengths and prefixes alone (a few
 * dozen additions, no Jaro–Winkler): when it is below the threshold, so is the score.
 */
export function scoreCeiling(subject: PreparedName, listed: PreparedName): number {
  if (subject.spaced === listed.spaced || subject.inOrder === listed.inOrder) return 1;
  if (coverScore(subject, listed) === 1) return 1;
  const joinedShared = sharedAtMost(subject.joinedLetters, listed.joinedLetters);
  const inOrderShared =
    subject.inOrderLetters === subject.joinedLetters && listed.inOrderLetters === listed.joinedLetters
      ? joinedShared
      : sharedAtMost(subject.inOrderLetters, listed.inOrderLetters);
  const spaces = Math.min(subject.sorted.length, listed.sorted.length) - 1;
  return Math.max(
    jaroWinklerAtMost(
      subject.spaced.length,
      listed.spaced.length,
      joinedShared + spaces,
      commonPrefix(subject.spaced, listed.spaced),
    ),
    jaroWinklerAtMost(
      subject.joined.length,
      listed.joined.length,
      joinedShared,
      commonPrefix(subject.joined, listed.joined),
    ),
    jaroWinklerAtMost(
      subject.inOrder.length,
      listed.inOrder.length,
      inOrderShared,
      commonPrefix(subject.inOrder, listed.inOrder),
    ),
  );
}

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
  if (coverScore(subject, listed) === 1) return 1;
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
        // A candidate that cannot beat the threshold or the best so far is not scored.
        const ceiling = scoreCeiling(subject, candidate.name);
        if (ceiling < minScore || (best !== undefined && ceiling <= best.score)) continue;
        const score = nameScore(subject, candidate.name);
        if (score >= minScore && (best === undefined || score > best.score)) {
          best = { entry: candidate.entry, score };
        }
      }
    }
    return best;
  }
}
