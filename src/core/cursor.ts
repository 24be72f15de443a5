// Cursors for lists read newest first: the last row's (created_at, id), opaque to the reader.
// A cursor that does not decode is a refusal the caller turns into a 422, never a crash.

import { AppError } from './errors.ts';

export type Cursor = { at: Date; id: string };

export const PAGE_SIZE = 50;

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.at.toISOString()}|${cursor.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(text: string): Cursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) return undefined;
  const [iso, id, extra] = Buffer.from(text, 'base64url').toString('utf8').split('|');
  if (iso === undefined || id === undefined || extra !== undefined || id.length === 0 || id.length > 100) {
    return undefined;
  }
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) || at.toISOString() !== iso ? undefined : { at, id };
}

/** Rows fetched one past the page: the page, and the next cursor when there is more. */
export function pageOf<T>(rows: T[], key: (row: T) => Cursor, size = PAGE_SIZE) {
  const items = rows.slice(0, size);
  const last = items[items.length - 1];
  return {
    items,
    next_cursor: rows.length > size && last !== undefined ? encodeCursor(key(last)) : null,
  };
}

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The cursor a list of uuid-keyed rows gave out, read from `?cursor=`: none when absent, a 422
 * naming the field when it is not one of ours (so a forged id never reaches the database).
 */
export function readCursor(text: string | undefined): Cursor | undefined {
  if (text === undefined) return undefined;
  const cursor = decodeCursor(text);
  if (cursor === undefined || !UUID_SHAPE.test(cursor.id)) {
    throw new AppError('invalid_request', 'The cursor is not one this list gave out.', { field: 'cursor' });
  }
  return cursor;
}
