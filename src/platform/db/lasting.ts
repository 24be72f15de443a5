import { sql } from 'kysely';

// Rows that never change once written (a ledger account's id, currency and side, a client
// credit's id and page token, an endpoint's id, an account's kind and currency) need not be read
// again on every call. A process keeps them by their natural key. This is safe across processes
// because the key is UNIQUE in the database (every process that asks gets the same row), the
// kept fields are never updated, and such rows are never deleted (the schema refuses it).
//
// The one way to keep a row that does not exist is to keep one written by a transaction that
// then rolled back: the reader's own, or a savepoint inside it. So a row is kept only when the
// statement that read it ran in a transaction that had written nothing (`readBeforeAnyWrite`).
// PostgreSQL gives a transaction an id at its first write, and gives the top-level transaction
// its id before any savepoint inside it writes; a transaction without an id has therefore
// written nothing, and every row it sees was committed by another.

/**
 * A bounded map of rows that never change once committed: the oldest entries go first once
 * `limit` is reached. `keep` takes the `readBeforeAnyWrite` column of the statement that read the
 * row, and keeps the row only when it is true.
 */
export class CommittedRows<V> {
  private readonly rows = new Map<string, V>();

  constructor(private readonly limit = 20_000) {}

  get(key: string): V | undefined {
    return this.rows.get(key);
  }

  keep(key: string, value: V, readBeforeAnyWrite: boolean): void {
    if (!readBeforeAnyWrite) return;
    if (this.rows.size >= this.limit && !this.rows.has(key)) {
      const oldest = this.rows.keys().next();
      if (!oldest.done) this.rows.delete(oldest.value);
    }
    this.rows.set(key, value);
  }

  clear(): void {
    this.rows.clear();
  }
}

/**
 * A select-list column that is true when the reading transaction has written nothing, so every
 * row the statement returns was committed by another transaction.
 */
export const readBeforeAnyWrite = sql<boolean>`(txid_current_if_assigned() IS NULL)`;
