import { type RawBuilder, sql } from 'kysely';

// Bulk inserts pass their rows as one JSON document instead of one array parameter per column:
// V8 writes JSON natively, while the driver spells arrays element by element in JavaScript,
// which made a 500-row push spend more time quoting than PostgreSQL spent inserting.

/**
 * `json_to_recordset($rows) AS alias(columns)`, for `INSERT … SELECT … FROM` it. `columns` is
 * the SQL column list with types (fixed text of ours, never user input); each row is an object
 * keyed by those column names. Text with a NUL cannot reach here (request bodies refuse it).
 */
export function jsonRecords(rows: readonly object[], alias: string, columns: string): RawBuilder<unknown> {
  return sql`json_to_recordset(${recordsJson(rows)}::json) AS ${sql.raw(`${alias}(${columns})`)}`;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * JSON.stringify writes a lone UTF-16 surrogate as a \uD8xx escape, which PostgreSQL refuses
 * to turn into text. A parameter sent as text would carry U+FFFD in its place instead, so the
 * rare document with such an escape is written again with the same replacement.
 */
export function recordsJson(rows: readonly object[]): string {
  const json = JSON.stringify(rows);
  // JSON.stringify spells such escapes in lower case; a cheap substring test rules most documents out.
  if (!json.includes('\\ud')) return json;
  return JSON.stringify(rows, (_key, value) =>
    typeof value === 'string' ? value.replace(LONE_SURROGATE, '\ufffd') : value,
  );
}

/**
 * Runs `work` while `statement` executes in the database, then waits for both. The driver only
 * sends the statement once the event loop turns, so the turn comes first; on embedded PGlite
 * (same thread) the two simply run one after the other. For bulk filings: the next statement's
 * document is written while the database inserts the previous one's rows.
 */
export async function alongside<T, U>(statement: Promise<T>, work: () => U): Promise<[T, U]> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  let done: U;
  try {
    done = work();
  } catch (error) {
    await statement.catch(() => {});
    throw error;
  }
  return [await statement, done];
}
