/** A broken invariant is a bug: it becomes a 500 `internal`, never a message the client sees. */
export class AssertionFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AssertionFailure';
  }
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionFailure(message);
}

/**
 * A value the code knows is there (a row it has just written, an index inside its array, a
 * column its state guarantees); its absence, null or undefined, is a bug.
 */
export function defined<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new AssertionFailure(`${what} is missing`);
  return value;
}
