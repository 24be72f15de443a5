// Cursors for lists whose sort key has several parts (a day, an account, a currency): the key of
// the last row shown, as base64url JSON. Read back only as the same number of strings; anything
// else is refused, never guessed at. Lists keyed by (created_at, id) use core/cursor.ts.

const CURSOR_LENGTH_MAX = 400;

export function encodeKeyCursor(key: string[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** The key inside a cursor, or undefined when it is not one of ours with `parts` strings. */
export function decodeKeyCursor(cursor: string, parts: number): string[] | undefined {
  if (cursor.length > CURSOR_LENGTH_MAX || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  try {
    const key: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(key) || key.length !== parts) return undefined;
    return key.every((part) => typeof part === 'string') ? (key as string[]) : undefined;
  } catch {
    return undefined;
  }
}

/** One more row than a page is fetched: its presence says another page follows. */
export function pageByKey<T>(rows: T[], limit: number, keyOf: (row: T) => string[]) {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, next_cursor: rows.length > limit && last ? encodeKeyCursor(keyOf(last)) : null };
}
