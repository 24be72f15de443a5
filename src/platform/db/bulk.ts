import { type RawBuilder, sql } from 'kysely';

// Bulk inserts pass their rows as one JSON document (an array of row arrays, read as jsonb)
// instead of one array parameter per column: V8 writes JSON natively, while the driver spells
// arrays element by element in JavaScript. The reasons are in docs/design/platform.md
// ("Database", bulk rows).

type Column = { name: string; type: string };

/** "id uuid, amount numeric" → its names and types (fixed text of ours, never user input). */
function columnsOf(list: string): Column[] {
  return list.split(',').map((part) => {
    const [name = '', type = ''] = part.trim().split(/\s+/, 2);
    return { name, type };
  });
}

/**
 * The JSON document `documentRows` reads: each row as an array in `columns` order. A `json`
 * column's value is written as its own JSON text, which PostgreSQL keeps as written.
 */
export function rowsDocument(rows: readonly object[], columns: string): string {
  const list = columnsOf(columns);
  return recordsJson(
    rows.map((row) =>
      list.map(({ name, type }) => {
        const value = (row as Record<string, unknown>)[name];
        return type === 'json' && value !== null && value !== undefined ? JSON.stringify(value) : value;
      }),
    ),
  );
}

/** `(SELECT … FROM jsonb_array_elements(document)) AS alias`, with the named, typed columns. */
export function documentRows(document: string, alias: string, columns: string): RawBuilder<unknown> {
  const select = columnsOf(columns)
    .map(({ name, type }, index) => `(t->>${index})::${type} AS ${name}`)
    .join(', ');
  return sql`(SELECT ${sql.raw(select)} FROM jsonb_array_elements(${document}::jsonb) AS t) AS ${sql.raw(alias)}`;
}

/**
 * Rows to `INSERT … SELECT … FROM` (or join): `columns` is the SQL column list with types, each
 * row an object keyed by those names. Text with a NUL cannot reach here (request bodies refuse it).
 */
export function jsonRecords(rows: readonly object[], alias: string, columns: string): RawBuilder<unknown> {
  return documentRows(rowsDocument(rows, columns), alias, columns);
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * JSON.stringify writes a lone UTF-16 surrogate as a \uD8xx escape, which PostgreSQL refuses
 * to turn into text. A parameter sent as text would carry U+FFFD in its place instead, so the
 * rare document with such an escape is written again with the same replacement.
 */
export function recordsJson(rows: readonly unknown[]): string {
  const json = JSON.stringify(rows);
  // JSON.stringify spells such escapes in lower case; a cheap substring test rules most documents out.
  if (!json.includes('\\ud')) return json;
  return JSON.stringify(rows, (_key, value) =>
    typeof value === 'string' ? value.replace(LONE_SURROGATE, '\ufffd') : value,
  );
}
