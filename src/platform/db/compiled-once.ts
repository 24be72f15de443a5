import { type Compilable, CompiledQuery, type RawBuilder, sql } from 'kysely';
import { assert } from '../../core/assert.ts';
import type { Queryable } from './database.ts';

// A hot read of fixed shape, built with Kysely's builders (so its columns and types are checked)
// but built and compiled once per shape, then sent as that text with each call's values. Building
// and compiling a query costs more JavaScript than sending it; on the web app's pages, which send
// the same few statements every time, it was about a tenth of the page's server CPU. The shapes
// are few and named by the caller (a status filter, a cursor or none), so the cache stays small.

/**
 * A count the query always takes (a page's LIMIT), written into its text instead of sent as a
 * parameter: the planner then sees the real count, as it would in a prepared statement's
 * generic plan, where a LIMIT parameter is estimated as a tenth of the table.
 */
export function writtenCount(count: number): RawBuilder<number> {
  assert(Number.isSafeInteger(count) && count >= 0, 'A written count is a whole number.');
  return sql.lit(count);
}

/** A named value of the call, in place of a value, while the query is built. */
export type QueryArg<Args> = <K extends keyof Args & string>(name: K) => Args[K];

/** The compiled text and, per parameter, the argument it takes or the constant the build wrote. */
type Template<Args> = { sql: string; order: ({ name: keyof Args & string } | { constant: unknown })[] };

/**
 * `build(db, arg, shape)` builds the query of one shape, writing `arg('name')` wherever a value of
 * the call goes. It sees no call's values (only their names), so what else it writes (a status
 * literal) is a constant of the shape, and stays one. Returns the rows.
 */
export function compiledOnce<Args extends Record<string, unknown>, Row, Shape extends string = 'one'>(
  build: (db: Queryable, arg: QueryArg<Args>, shape: Shape) => Compilable<Row>,
) {
  const templates = new Map<Shape, Template<Args>>();
  const template = (db: Queryable, shape: Shape): Template<Args> => {
    const slots = new Map<object, keyof Args & string>();
    const arg: QueryArg<Args> = (name) => {
      const slot = { argument: name };
      slots.set(slot, name);
      return slot as unknown as Args[typeof name];
    };
    const compiled = build(db, arg, shape).compile();
    const order = compiled.parameters.map((parameter) => {
      const name = typeof parameter === 'object' && parameter !== null ? slots.get(parameter) : undefined;
      return name === undefined ? { constant: parameter } : { name };
    });
    assert(slots.size > 0, 'A query compiled once takes its values as arguments.');
    return { sql: compiled.sql, order };
  };
  return async (db: Queryable, args: Args, shape = 'one' as Shape): Promise<Row[]> => {
    let known = templates.get(shape);
    if (!known) {
      known = template(db, shape);
      templates.set(shape, known);
    }
    const parameters = known.order.map((slot) => ('name' in slot ? args[slot.name] : slot.constant));
    const result = await db.executeQuery<Row>(CompiledQuery.raw(known.sql, parameters));
    return result.rows;
  };
}
