import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { defined } from '../../core/assert.ts';
import type { Cursor } from '../../core/cursor.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { readBeforeAnyWrite } from '../../platform/db/lasting.ts';
import { olderThan } from '../../platform/db/paging.ts';
import type { HttpMethod } from './domain.ts';

/**
 * The endpoint filed under `address` in the space, created on first use. Answers its id and
 * whether it was read before this transaction wrote anything (only then may it be kept).
 */
export async function upsertResource(
  db: Queryable,
  spaceId: string,
  address: string,
  at: Date,
): Promise<{ id: string; lasting: boolean }> {
  const find = () =>
    db
      .selectFrom('resources')
      .select(['id', readBeforeAnyWrite.as('lasting')])
      .where('space_id', '=', spaceId)
      .where('address', '=', address)
      .executeTakeFirst();
  const existing = await find();
  if (existing) return existing;
  await db
    .insertInto('resources')
    .values({ id: randomUUID(), space_id: spaceId, address, created_at: at, updated_at: at })
    .onConflict((conflict) => conflict.columns(['space_id', 'address']).doNothing())
    .execute();
  return defined(await find(), 'the resource just ensured');
}

export function findResource(db: Queryable, spaceId: string, resourceId: string) {
  return db
    .selectFrom('resources')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('id', '=', resourceId)
    .executeTakeFirst();
}

export type CardRow = {
  id: string;
  address: string;
  name: string;
  findable: boolean;
  description: string;
  http_method: HttpMethod | null;
  input_schema: Record<string, unknown> | null;
  input_example: Record<string, unknown> | null;
  output_schema: Record<string, unknown> | null;
  output_example: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  call_count: string;
  last_payment_at: Date | null;
};

/**
 * A space's endpoint cards with their figures: calls are the settlements of requests filed under
 * the endpoint plus the prepaid charges for it; the last payment is the latest of either.
 */
/** One card (`resourceId`), or a page of cards: the newest first, `limit` older than `before`. */
export async function listCards(
  db: Queryable,
  spaceId: string,
  which: { resourceId: string } | { before: Cursor | undefined; limit: number },
): Promise<CardRow[]> {
  const only =
    'resourceId' in which
      ? sql`AND r.id = ${which.resourceId}`
      : sql`AND ${olderThan('r.created_at', 'r.id', which.before)} ORDER BY r.created_at DESC, r.id DESC LIMIT ${which.limit}`;
  const result = await sql<CardRow>`
    SELECT r.id, r.address, r.name, r.findable, r.description, r.http_method, r.input_schema, r.input_example,
      r.output_schema, r.output_example, r.created_at, r.updated_at,
      (COALESCE(paid.calls, 0) + COALESCE(charged.calls, 0))::text AS call_count,
      GREATEST(paid.last_at, charged.last_at) AS last_payment_at
    FROM resources r
    LEFT JOIN LATERAL (
      SELECT count(*) AS calls, max(s.settled_at) AS last_at
      FROM settlements s JOIN payment_requests p ON p.id = s.payment_request_id
      WHERE p.space_id = r.space_id AND p.resource_id = r.id
    ) paid ON true
    LEFT JOIN LATERAL (
      SELECT count(*) AS calls, max(c.created_at) AS last_at
      FROM charges c WHERE c.space_id = r.space_id AND c.resource_id = r.id
    ) charged ON true
    WHERE r.space_id = ${spaceId} ${only}`.execute(db);
  return result.rows.map((row) => ({
    ...row,
    last_payment_at: row.last_payment_at === null ? null : new Date(row.last_payment_at),
  }));
}

/**
 * Distinct payers per endpoint and day, for the days given (oldest first, each [start, end) with
 * its date, as core/day.ts makes them): machine payers by address, clients by ref.
 */
export async function payersPerDay(
  db: Queryable,
  spaceId: string,
  days: readonly { date: string; start: Date; end: Date }[],
  resourceIds: string[],
) {
  const first = days[0];
  const last = days.at(-1);
  if (resourceIds.length === 0 || first === undefined || last === undefined) return [];
  const ids = sql`(SELECT jsonb_array_elements_text(${JSON.stringify(resourceIds)}::jsonb)::uuid)`;
  const dates = days.map((day) => day.date);
  const starts = days.map((day) => day.start.toISOString());
  const ends = days.map((day) => day.end.toISOString());
  const result = await sql<{ resource_id: string; day: string; payers: string }>`
    SELECT calls.resource_id, d.day, count(DISTINCT calls.payer)::text AS payers FROM (
      SELECT p.resource_id, s.settled_at AS at, 'payer:' || lower(s.payer) AS payer
      FROM settlements s JOIN payment_requests p ON p.id = s.payment_request_id
      WHERE p.space_id = ${spaceId} AND p.resource_id IN ${ids}
        AND s.settled_at >= ${first.start} AND s.settled_at < ${last.end}
      UNION ALL
      SELECT c.resource_id, c.created_at, 'client:' || cc.client_ref
      FROM charges c JOIN client_credits cc ON cc.id = c.client_credit_id
      WHERE c.space_id = ${spaceId} AND c.resource_id IN ${ids}
        AND c.created_at >= ${first.start} AND c.created_at < ${last.end}
    ) calls
    JOIN unnest(${dates}::text[], ${starts}::timestamptz[], ${ends}::timestamptz[]) AS d(day, starts_at, ends_at)
      ON calls.at >= d.starts_at AND calls.at < d.ends_at
    GROUP BY calls.resource_id, d.day`.execute(db);
  return result.rows;
}

/** What an update may change on a card; an absent field stays as it is, null clears it. */
export type CardChange = {
  name?: string | undefined;
  findable?: boolean | undefined;
  description?: string | undefined;
  http_method?: HttpMethod | null | undefined;
  input_schema?: Record<string, unknown> | null | undefined;
  input_example?: Record<string, unknown> | null | undefined;
  output_schema?: Record<string, unknown> | null | undefined;
  output_example?: Record<string, unknown> | null | undefined;
};

export async function updateCard(
  db: Queryable,
  spaceId: string,
  resourceId: string,
  change: CardChange,
  at: Date,
): Promise<boolean> {
  const { input_schema, input_example, output_schema, output_example, ...plain } = change;
  const json = (value: Record<string, unknown> | null | undefined) =>
    value === undefined ? {} : value === null ? null : JSON.stringify(value);
  const schemas = {
    ...(input_schema === undefined ? {} : { input_schema: json(input_schema) as string | null }),
    ...(input_example === undefined ? {} : { input_example: json(input_example) as string | null }),
    ...(output_schema === undefined ? {} : { output_schema: json(output_schema) as string | null }),
    ...(output_example === undefined ? {} : { output_example: json(output_example) as string | null }),
  };
  const result = await db
    .updateTable('resources')
    .set({ ...plain, ...schemas, updated_at: at })
    .where('space_id', '=', spaceId)
    .where('id', '=', resourceId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Findable cards of every space, for the public discovery list: address, name, creation (never the time of a payment). */
export async function listFindable(db: Queryable, limit: number, offset: number) {
  const [rows, total] = await Promise.all([
    db
      .selectFrom('resources')
      .select([
        'address',
        'name',
        'description',
        'http_method',
        'input_schema',
        'input_example',
        'output_schema',
        'output_example',
        'created_at',
      ])
      .where('findable', '=', true)
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute(),
    db
      .selectFrom('resources')
      .select((eb) => eb.fn.countAll<string>().as('total'))
      .where('findable', '=', true)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}

/** Addresses and names of some resources of a space, for labelling income rows. */
export function resourceLabels(db: Queryable, spaceId: string, ids: string[]) {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('resources')
    .select(['id', 'address', 'name'])
    .where('space_id', '=', spaceId)
    .where('id', 'in', ids)
    .execute();
}
