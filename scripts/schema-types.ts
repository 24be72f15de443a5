import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import ts from 'typescript';
import type { Queryable } from '../src/platform/db/database.ts';

// src/platform/db/schema.ts is kept by hand: its column types carry what the catalog cannot say
// (status unions, the shapes of JSON documents, what an insert may leave out). This module keeps
// it true: it reads the interface `Database` with the TypeScript compiler and compares every
// table and column with information_schema of a migrated database — the same tables, the same
// columns, NULL allowed exactly where the column is nullable, a TypeScript type of the kind the
// drivers return for the column's SQL type, and, where a column's type is a union of string
// literals and a CHECK lists the column's values, the same values. test/schema-types.test.ts runs it on every
// database the suite runs on; `npm run schema:check` runs it too.

export const SCHEMA_TS_PATH = fileURLToPath(new URL('../src/platform/db/schema.ts', import.meta.url));

/** Tables the app never queries through Kysely's types: the migration runner's own record. */
const UNTYPED_TABLES = new Set(['schema_migrations']);

type Kind = 'string' | 'number' | 'bigint' | 'boolean' | 'date' | 'array' | 'object' | 'other';

/** What a driver hands back for each SQL type, as kinds of TypeScript type the row may declare. */
const KINDS_BY_SQL_TYPE: Record<string, readonly Kind[]> = {
  text: ['string'],
  uuid: ['string'],
  numeric: ['string'],
  // Calendar dates stay text (src/platform/db/database.ts sets the parsers).
  date: ['string'],
  // int8 arrives as text from node-postgres; the rows declare string.
  int8: ['string'],
  int4: ['number'],
  int2: ['number'],
  bool: ['boolean'],
  timestamptz: ['date'],
  json: ['object', 'array'],
  jsonb: ['object', 'array'],
  _text: ['array'],
  // bytea: a Buffer from node-postgres, a Uint8Array from PGlite.
  bytea: ['object'],
};

/** `literals` holds the string literals of a union of them; null when any string is allowed. */
export type DeclaredColumn = { nullable: boolean; kinds: Set<Kind>; literals?: Set<string> | null };
/** `allowed` holds the values a `CHECK (column = ANY (ARRAY[…]))` lists, when there is one. */
export type CatalogColumn = { nullable: boolean; sqlType: string; allowed?: Set<string> };
export type Columns<T> = Map<string, Map<string, T>>;

function kindsOf(type: ts.Type, checker: ts.TypeChecker, into: DeclaredColumn): void {
  if (type.isUnion()) {
    for (const member of type.types) kindsOf(member, checker, into);
    return;
  }
  const selected = type.getProperty('__select__');
  if (selected) {
    kindsOf(checker.getTypeOfSymbol(selected), checker, into);
    return;
  }
  const flags = type.flags;
  if (flags & ts.TypeFlags.Null) into.nullable = true;
  else if (flags & ts.TypeFlags.StringLiteral) {
    into.kinds.add('string');
    if (into.literals !== null) {
      into.literals ??= new Set();
      into.literals.add((type as ts.StringLiteralType).value);
    }
  } else if (flags & ts.TypeFlags.StringLike) {
    into.kinds.add('string');
    into.literals = null;
  } else if (flags & ts.TypeFlags.NumberLike) into.kinds.add('number');
  else if (flags & ts.TypeFlags.BigIntLike) into.kinds.add('bigint');
  else if (flags & ts.TypeFlags.BooleanLike) into.kinds.add('boolean');
  else if (checker.isArrayType(type)) into.kinds.add('array');
  else if (type.getSymbol()?.getName() === 'Date') into.kinds.add('date');
  else if (flags & ts.TypeFlags.Object) into.kinds.add('object');
  else into.kinds.add('other');
}

/** The tables and columns the interface `Database` in schema.ts declares (merged declarations included). */
export function declaredColumns(path = SCHEMA_TS_PATH): Columns<DeclaredColumn> {
  const program = ts.createProgram([path], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    lib: ['lib.es2023.d.ts'],
    types: [],
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(path);
  const module = source && checker.getSymbolAtLocation(source);
  const database = module && checker.getExportsOfModule(module).find((symbol) => symbol.name === 'Database');
  if (!database) throw new Error(`${path} exports no interface Database`);
  const tables: Columns<DeclaredColumn> = new Map();
  for (const table of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(database))) {
    const columns = new Map<string, DeclaredColumn>();
    for (const column of checker.getPropertiesOfType(checker.getTypeOfSymbol(table))) {
      const declared: DeclaredColumn = { nullable: false, kinds: new Set() };
      // An optional property would read as undefined, which no driver returns.
      if (column.flags & ts.SymbolFlags.Optional) declared.kinds.add('other');
      kindsOf(checker.getTypeOfSymbol(column), checker, declared);
      columns.set(column.name, declared);
    }
    tables.set(table.name, columns);
  }
  return tables;
}

/** The tables and columns of the public schema, as information_schema reports them. */
export async function catalogColumns(db: Queryable): Promise<Columns<CatalogColumn>> {
  const rows = await sql<{ table_name: string; column_name: string; is_nullable: string; udt_name: string }>`
    SELECT c.table_name, c.column_name, c.is_nullable, c.udt_name
    FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
    ORDER BY c.table_name, c.ordinal_position`.execute(db);
  const tables: Columns<CatalogColumn> = new Map();
  for (const row of rows.rows) {
    if (UNTYPED_TABLES.has(row.table_name)) continue;
    let columns = tables.get(row.table_name);
    if (!columns) {
      columns = new Map();
      tables.set(row.table_name, columns);
    }
    columns.set(row.column_name, { nullable: row.is_nullable === 'YES', sqlType: row.udt_name });
  }
  const checks = await sql<{ table_name: string; definition: string }>`
    SELECT rel.relname AS table_name, pg_get_constraintdef(c.oid) AS definition
    FROM pg_constraint c
    JOIN pg_class rel ON rel.oid = c.conrelid
    JOIN pg_namespace ns ON ns.oid = rel.relnamespace
    WHERE c.contype = 'c' AND ns.nspname = 'public'`.execute(db);
  for (const check of checks.rows) {
    const listed = listedValues(check.definition);
    const column = listed && tables.get(check.table_name)?.get(listed.column);
    if (listed && column) column.allowed = listed.values;
  }
  return tables;
}

/**
 * The column and values of a CHECK that only lists a column's values, as PostgreSQL spells it
 * back: `CHECK ((kind = ANY (ARRAY['bank'::text, 'card'::text])))`. Any other CHECK is null.
 */
export function listedValues(definition: string): { column: string; values: Set<string> } | null {
  const head = 'CHECK ((';
  const middle = ' = ANY (ARRAY[';
  const tail = '])))';
  if (!definition.startsWith(head) || !definition.endsWith(tail)) return null;
  const inner = definition.slice(head.length, -tail.length);
  const split = inner.indexOf(middle);
  if (split < 0) return null;
  const column = inner.slice(0, split);
  if (!/^[a-z_][a-z0-9_]*$/.test(column)) return null;
  const values = new Set<string>();
  for (const item of inner.slice(split + middle.length).split(', ')) {
    const suffix = "'::text";
    if (!item.startsWith("'") || !item.endsWith(suffix)) return null;
    const value = item.slice(1, -suffix.length);
    if (value.includes("'")) return null;
    values.add(value);
  }
  return { column, values };
}

/** Every way schema.ts disagrees with the catalog, one sentence each; empty when they agree. */
export function schemaTypeProblems(
  declared: Columns<DeclaredColumn>,
  catalog: Columns<CatalogColumn>,
): string[] {
  const problems: string[] = [];
  for (const table of declared.keys()) {
    if (!catalog.has(table)) problems.push(`${table}: declared in schema.ts, but no such table`);
  }
  for (const [table, columns] of catalog) {
    const declaredColumns = declared.get(table);
    if (!declaredColumns) {
      problems.push(`${table}: a table the migrations make, missing from Database in schema.ts`);
      continue;
    }
    for (const name of declaredColumns.keys()) {
      if (!columns.has(name)) problems.push(`${table}.${name}: declared in schema.ts, but no such column`);
    }
    for (const [name, column] of columns) {
      const row = declaredColumns.get(name);
      if (!row) {
        problems.push(`${table}.${name}: a ${column.sqlType} column missing from schema.ts`);
        continue;
      }
      if (row.nullable !== column.nullable) {
        problems.push(
          `${table}.${name}: ${column.nullable ? 'nullable' : 'NOT NULL'} in the database, ` +
            `${row.nullable ? 'nullable' : 'not nullable'} in schema.ts`,
        );
      }
      const allowed = KINDS_BY_SQL_TYPE[column.sqlType];
      if (!allowed) {
        problems.push(`${table}.${name}: SQL type ${column.sqlType} has no known TypeScript kind here`);
        continue;
      }
      if (row.literals && column.allowed) {
        const unknown = [...row.literals].filter((value) => !column.allowed?.has(value));
        const missing = [...column.allowed].filter((value) => !row.literals?.has(value));
        if (unknown.length > 0 || missing.length > 0) {
          problems.push(
            `${table}.${name}: the CHECK allows ${[...column.allowed].join(', ')}; ` +
              `schema.ts says ${[...row.literals].join(' | ')}`,
          );
        }
      }
      const wrong = [...row.kinds].filter((kind) => !allowed.includes(kind));
      if (row.kinds.size === 0 || wrong.length > 0) {
        problems.push(
          `${table}.${name}: ${column.sqlType} reads as ${allowed.join(' or ')}, ` +
            `schema.ts says ${[...row.kinds].join(' | ') || 'nothing'}`,
        );
      }
    }
  }
  return problems;
}
