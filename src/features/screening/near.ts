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
  /** Letters of `joined` (the sorted words without spaces) and of `inOrder` (as written, repeats kept; the same array when no word repeats). */
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
  const alone = new Bucket<null>();
  alone.add({ name: listed, entry: null, number: 0 });
  return alone.spellingCeiling(asQuery(subject), 0);
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
  return spellingScore(subject, listed);
}

/** The misspelling and joined-word part of `nameScore`: the best Jaro–Winkler of the three forms. */
function spellingScore(subject: PreparedName, listed: PreparedName): number {
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

/** A listed name in the index; `number` is its place in the index. */
type Indexed<T> = { name: PreparedName; entry: T; number: number };

/** How many code units of each form the prefix bound reads (Jaro–Winkler's prefix is at most 4). */
const HEAD = 4;
/**
 * What stands past a form's end among a candidate's first code units, and among the subject's:
 * the two never match each other (a name holding U+FFFF could match the candidate's pad, which
 * only raises the ceiling, so it never drops a match).
 */
const CANDIDATE_PAD = 0xffff;
const SUBJECT_PAD = -2;

/** Numbers of one kind in a typed array that doubles as it fills: a bucket's columns. */
class Column<A extends Uint8Array | Uint16Array | Uint32Array> {
  values: A;
  length = 0;

  constructor(private readonly make: (size: number) => A) {
    this.values = make(16);
  }

  push(value: number) {
    if (this.length === this.values.length) {
      const grown = this.make(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length] = value;
    this.length += 1;
  }
}

/** The subject's side of the ceiling, read once per query. */
type Query = {
  name: PreparedName;
  /** Lengths of the spaced, joined and in-order forms, and the number of distinct words. */
  shape: number[];
  /** The first HEAD code units of each form, SUBJECT_PAD past its end. */
  heads: number[];
  sameLetters: boolean;
};

function asQuery(name: PreparedName): Query {
  return {
    name,
    shape: [name.spaced.length, name.joined.length, name.inOrder.length, name.sorted.length],
    heads: headsOf(name, SUBJECT_PAD),
    sameLetters: name.inOrderLetters === name.joinedLetters,
  };
}

function headsOf(name: PreparedName, pad: number): number[] {
  const heads: number[] = [];
  for (const form of [name.spaced, name.joined, name.inOrder]) {
    for (let at = 0; at < HEAD; at++) heads.push(at < form.length ? form.charCodeAt(at) : pad);
  }
  return heads;
}

/**
 * One blocking key's entries, stored column by column: what the ceiling reads of each entry
 * (lengths, first letters, letter counts) lies in a few flat arrays that a query sweeps in order,
 * and an entry's own objects are visited only when its ceiling lets it be scored.
 */
class Bucket<T> {
  readonly entries: Indexed<T>[] = [];
  /** Per entry, four numbers: as `Query.shape`. */
  private readonly shapes = new Column((size) => new Uint32Array(size));
  /** Per entry, 3 × HEAD code units: as `Query.heads`, 0xFFFF past a form's end. */
  private readonly heads = new Column((size) => new Uint16Array(size));
  /** Per entry, three offsets into `pairs`: where its joined letters start and end, and where its in-order letters end (the same as the joined end when no word repeats). */
  private readonly spans = new Column((size) => new Uint32Array(size));
  /** (letter bucket, count) pairs, one per letter bucket that occurs (a bucket is below 64, a count at most 255). */
  private readonly pairs = new Column((size) => new Uint8Array(size));

  add(indexed: Indexed<T>) {
    const { name } = indexed;
    this.entries.push(indexed);
    for (const value of [name.spaced.length, name.joined.length, name.inOrder.length, name.sorted.length])
      this.shapes.push(value);
    for (const unit of headsOf(name, CANDIDATE_PAD)) this.heads.push(unit);
    const start = this.pairs.length;
    this.pushPairs(name.joinedLetters);
    const joinedEnd = this.pairs.length;
    if (name.inOrderLetters !== name.joinedLetters) this.pushPairs(name.inOrderLetters);
    this.spans.push(start);
    this.spans.push(joinedEnd);
    this.spans.push(this.pairs.length);
  }

  private pushPairs(counts: Uint8Array) {
    for (let bucket = 0; bucket < LETTER_BUCKETS; bucket++) {
      const count = counts[bucket] ?? 0;
      if (count > 0) {
        this.pairs.push(bucket);
        this.pairs.push(count);
      }
    }
  }

  /** How many letters the subject's counts share at most with pairs [from, to). */
  private shared(counts: Uint8Array, from: number, to: number): number {
    const pairs = this.pairs.values;
    let shared = 0;
    for (let at = from; at < to; at += 2) {
      shared += Math.min(counts[pairs[at] as number] ?? 0, pairs[at + 1] as number);
    }
    return shared;
  }

  private prefix(query: Query, at: number, form: number): number {
    let prefix = 0;
    const mine = at * 3 * HEAD + form * HEAD;
    const heads = this.heads.values;
    while (prefix < HEAD && query.heads[form * HEAD + prefix] === heads[mine + prefix]) prefix += 1;
    return prefix;
  }

  /**
   * The ceiling of `spellingScore` for the entry at `at`: what the letters two names share allow
   * at most. Jaro's matches are pairs of equal letters, each letter used once, so they are never
   * more than the overlap of the two letter counts (letters sharing a bucket, and counts capped at
   * 255, only make it larger); the sorted form's spaces match at most one per word the shorter
   * name has, less one.
   */
  spellingCeiling(query: Query, at: number): number {
    const shape = at * 4;
    const span = at * 3;
    const shapes = this.shapes.values;
    const spans = this.spans.values;
    const joinedStart = spans[span] as number;
    const joinedEnd = spans[span + 1] as number;
    const inOrderEnd = spans[span + 2] as number;
    const joinedShared = this.shared(query.name.joinedLetters, joinedStart, joinedEnd);
    const listedSame = inOrderEnd === joinedEnd;
    const inOrderShared =
      query.sameLetters && listedSame
        ? joinedShared
        : listedSame
          ? this.shared(query.name.inOrderLetters, joinedStart, joinedEnd)
          : this.shared(query.name.inOrderLetters, joinedEnd, inOrderEnd);
    const spaces = Math.min(query.shape[3] as number, shapes[shape + 3] as number) - 1;
    return Math.max(
      jaroWinklerAtMost(
        query.shape[0] as number,
        shapes[shape] as number,
        joinedShared + spaces,
        this.prefix(query, at, 0),
      ),
      jaroWinklerAtMost(
        query.shape[1] as number,
        shapes[shape + 1] as number,
        joinedShared,
        this.prefix(query, at, 1),
      ),
      jaroWinklerAtMost(
        query.shape[2] as number,
        shapes[shape + 2] as number,
        inOrderShared,
        this.prefix(query, at, 2),
      ),
    );
  }
}

/**
 * The names of a list, indexed by blocking key: a payee's name is scored only against entries
 * that share a key with it. A near match that shares no key (every word misspelt within its first
 * three letters) is not found; docs/design/screening.md states this bound.
 */
export class NameIndex<T> {
  /** The entries by blocking key, by whole word and by exact spelling. */
  private readonly byKey = new Map<string, Bucket<T>>();
  private readonly byWord = new Map<string, Indexed<T>[]>();
  private readonly exact = new Map<string, Indexed<T>>();
  /** Per entry (by number), the last query that took it as a candidate: each is scored once per query. */
  private readonly seen: number[] = [];
  private queries = 0;

  add(words: readonly string[], entry: T) {
    if (words.length === 0) return;
    const indexed = { name: prepareName(words), entry, number: this.seen.length };
    this.seen.push(0);
    for (const key of [indexed.name.spaced, `#${indexed.name.inOrder}`, `#${indexed.name.joined}`]) {
      if (!this.exact.has(key)) this.exact.set(key, indexed);
    }
    for (const key of blockingKeys(indexed.name)) {
      let bucket = this.byKey.get(key);
      if (bucket === undefined) {
        bucket = new Bucket<T>();
        this.byKey.set(key, bucket);
      }
      bucket.add(indexed);
    }
    for (const word of indexed.name.sorted) {
      const list = this.byWord.get(word);
      if (list === undefined) this.byWord.set(word, [indexed]);
      else list.push(indexed);
    }
  }

  get size() {
    return this.seen.length;
  }

  /**
   * The best entry scoring at least `minScore` against the name, or undefined. Three steps, from
   * the cheapest: the same name written alike (score 1); an entry whose words cover the name or are
   * covered by it (score 1; such an entry shares a whole word, so it is among that word's entries);
   * then every entry sharing a blocking key, its spelling scored only where the ceiling allows.
   */
  best(words: readonly string[], minScore: number): NearHit<T> | undefined {
    if (words.length === 0) return undefined;
    const subject = prepareName(words);
    for (const key of [subject.spaced, `#${subject.inOrder}`, `#${subject.joined}`]) {
      const found = this.exact.get(key);
      if (found !== undefined) return { entry: found.entry, score: 1 };
    }
    for (const word of subject.sorted) {
      for (const candidate of this.byWord.get(word) ?? []) {
        if (coverScore(subject, candidate.name) === 1) return { entry: candidate.entry, score: 1 };
      }
    }
    // Neither step answered, so `nameScore` is `spellingScore` for every candidate below.
    this.queries += 1;
    const query = asQuery(subject);
    let best: NearHit<T> | undefined;
    for (const key of blockingKeys(subject)) {
      const bucket = this.byKey.get(key);
      if (bucket === undefined) continue;
      for (let at = 0; at < bucket.entries.length; at++) {
        // A candidate that cannot beat the threshold or the best so far is not scored.
        const ceiling = bucket.spellingCeiling(query, at);
        if (ceiling < minScore || (best !== undefined && ceiling <= best.score)) continue;
        const candidate = bucket.entries[at] as Indexed<T>;
        if (this.seen[candidate.number] === this.queries) continue;
        this.seen[candidate.number] = this.queries;
        const score = spellingScore(subject, candidate.name);
        if (score >= minScore && (best === undefined || score > best.score)) {
          best = { entry: candidate.entry, score };
        }
      }
    }
    return best;
  }
}
