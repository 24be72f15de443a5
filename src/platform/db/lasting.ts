import { sql } from 'kysely';

// Rows that never change once written (a ledger account's id, currency and side, a client
// credit's id and page token, an endpoint's id, an account's kind and currency) need not be read
// again on every call. A process keeps them by their natural key. This is safe across processes
// because the key is UNIQUE in the database (every process that asks gets the same row), the
// cached fields are never updated, and such rows are never deleted (the schema refuses it).
//
// The one way a cache could hold a row that does not exist is to remember a row written by a
// transaction that then rolled back. So a row is remembered only when `committedByOthers` says
// the reading transaction did not write it itself: a row read back from another, committed
// transaction cannot disappear.

/** A bounded map of lasting rows: the oldest entries go first once `limit` is reached. */
export class LastingRows<V> {
  private readonly rows = new Map<string, V>();

  constructor(private readonly limit = 20_000) {}

  get(key: string): V | undefined {
    return this.rows.get(key);
  }

  remember(key: string, value: V): void {
    if (this.rows.size >= this.limit && !this.rows.has(key)) {
      const oldest = this.rows.keys().next();
      if (!oldest.done) this.rows.delete(oldest.value);
    }
    this.rows.set(key, value);
  }

  forget(key: string): void {
    this.rows.delete(key);
  }

  clear(): void {
    this.rows.clear();
  }
}

/**
 * A select-list column that is true when the row was written by some other transaction than the
 * one reading it (its xmin is not the reader's transaction id): only such rows are remembered.
 * The reader's id is 64-bit (epoch and xid); a row's xmin is the 32-bit xid.
 */
export const committedByOthers = committedByOthersOf();

/** The same test for the row of `table` (an alias) in a query that joins several. */
export function committedByOthersOf(table?: string) {
  const xmin = table === undefined ? sql.ref('xmin') : sql.ref(`${table}.xmin`);
  return sql<boolean>`(${xmin}::text <> COALESCE((txid_current_if_assigned() % 4294967296)::text, ''))`;
}
