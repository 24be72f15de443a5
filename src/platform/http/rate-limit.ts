import type { Redis } from 'ioredis';
import { type Compilable, type Expression, type RawBuilder, sql } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import { createBatcher } from '../batch.ts';
import { compiledOnce, type QueryArg } from '../db/compiled-once.ts';
import type { Db, Queryable } from '../db/database.ts';

// 240 calls per rolling minute per key, counted where every process sees the same numbers
// (PostgreSQL, or Redis when configured). Calls are counted in ten-second buckets; a call is
// admitted only if the current bucket plus the six before it (60 to 70 seconds of history)
// hold no more than the limit, so no 60-second span ever admits more than 240 calls.
// Every call with a live key counts, refused ones too: a client that keeps hammering stays out.

export const RATE_LIMIT_PER_MINUTE = 240;
const BUCKET_SECONDS = 10;
const BUCKETS_BACK = 6;
const WINDOW_SECONDS = (BUCKETS_BACK + 1) * BUCKET_SECONDS;

export type RateDecision = {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until enough of the window has passed for a call to be admitted again. */
  resetSeconds: number;
};

export type RateHit = { keyId: string; stampKey?: string };
export type RateResult = { decision: RateDecision; stamp: string | null };

/** A row found by a lookup, and the decision on the key it names (none when nothing was found). */
export type RateAlong<Row> = { row: Row | undefined; decision: RateDecision | null };

/**
 * A door's lookup (at most one row; its `rate_key` names the key to count on, null for none),
 * written with `arg('name')` wherever a value of the call goes, as compiledOnce builds: the
 * limiter builds and compiles it, with its count around it, once per process, and sends that
 * text with each call's values. Pass the same function every time (a module constant).
 */
export type AlongLookup<Args, Row> = (
  db: Queryable,
  arg: QueryArg<Args>,
) => Expression<Row> & Compilable<Row>;

export interface RateLimiter {
  hit(item: RateHit): Promise<RateResult>;
  /**
   * Runs `lookup` (at most one row; its `rate_key` names the key, null for none) and counts one
   * call on that key. On PostgreSQL both are one statement, so a door that finds its caller
   * and counts the call pays one round trip; with Redis, the lookup runs first, then the hit.
   */
  hitAlong<Args extends Record<string, unknown>, Row extends { rate_key: string | null }>(
    db: Db,
    lookup: AlongLookup<Args, Row>,
    args: Args,
  ): Promise<RateAlong<Row>>;
}

type BucketTotals = { total: number; oldestBucket: number | null };

/** Pure: the decision for the i-th call of a batch, given what the store returned. */
export function decide(
  totals: BucketTotals,
  addedInBatch: number,
  indexInBatch: number,
  nowMs: number,
  limit = RATE_LIMIT_PER_MINUTE,
): RateDecision {
  const seen = totals.total - addedInBatch + indexInBatch + 1;
  const allowed = seen <= limit;
  const nowSeconds = nowMs / 1000;
  const oldestStart = (totals.oldestBucket ?? Math.floor(nowSeconds / BUCKET_SECONDS)) * BUCKET_SECONDS;
  const resetSeconds = Math.max(1, Math.ceil(oldestStart + WINDOW_SECONDS - nowSeconds));
  return { allowed, limit, remaining: Math.max(0, limit - seen), resetSeconds };
}

function groupByKey(items: RateHit[]): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  items.forEach((item, index) => {
    const list = groups.get(item.keyId) ?? [];
    list.push(index);
    groups.set(item.keyId, list);
  });
  return groups;
}

/** The current bucket and the first of the window's earlier ones, as `countingSteps` reads them. */
function windowOf(nowMs: number) {
  const bucket = Math.floor(nowMs / 1000 / BUCKET_SECONDS);
  return { rate_bucket: bucket, rate_since: bucket - BUCKETS_BACK };
}

type Window = ReturnType<typeof windowOf>;

/**
 * The count both PostgreSQL paths share, as two steps of a WITH: `bumped` adds each key's calls
 * (`calls` yields key_id uuid, hits int) to its current bucket; `counted` reads back the window's
 * total and its oldest non-empty bucket. The window's sum reads the statement's snapshot, so it
 * sees the earlier buckets only; the current one's count comes from `bumped`.
 */
function countingSteps(calls: RawBuilder<unknown>, window: Window) {
  const { rate_bucket: bucket, rate_since: since } = window;
  return sql`bumped AS (
        INSERT INTO rate_buckets (key_id, bucket_start, hits)
        SELECT key_id, ${bucket}, hits FROM (${calls}) AS calls
        ON CONFLICT (key_id, bucket_start) DO UPDATE SET hits = rate_buckets.hits + excluded.hits
        RETURNING key_id, hits
      ), counted AS (
        SELECT b.key_id,
               (b.hits + COALESCE(SUM(r.hits), 0))::int AS total,
               LEAST(MIN(r.bucket_start), ${bucket})::int AS oldest
        FROM bumped b
        LEFT JOIN rate_buckets r
          ON r.key_id = b.key_id AND r.bucket_start >= ${since} AND r.bucket_start < ${bucket}
        GROUP BY b.key_id, b.hits
      )`;
}

type AlongRow<Row> = Row & { rate_total: number | null; rate_oldest: number | null };

type AnyStatement = (db: Queryable, args: Record<string, unknown>) => Promise<unknown[]>;

/** The statement made for a lookup, made on its first use and kept as long as the lookup is. */
function madeFor(made: WeakMap<object, AnyStatement>, lookup: object, make: () => unknown): AnyStatement {
  let statement = made.get(lookup);
  if (!statement) {
    statement = make() as AnyStatement;
    made.set(lookup, statement);
  }
  return statement;
}

const alongStatements = new WeakMap<object, AnyStatement>();

/**
 * The lookup and the count of its key as one statement (the same count as `run`, for the one key
 * the lookup found), built and compiled once per lookup.
 */
function alongStatement<Args extends Record<string, unknown>, Row>(lookup: AlongLookup<Args, Row>) {
  const statement = madeFor(alongStatements, lookup, () =>
    compiledOnce((db: Queryable, arg: QueryArg<Args & Window>) => {
      const window = { rate_bucket: arg('rate_bucket'), rate_since: arg('rate_since') };
      const calls = sql`SELECT rate_key::uuid AS key_id, 1 AS hits FROM found WHERE rate_key IS NOT NULL`;
      const text = sql<AlongRow<Row>>`
        WITH found AS (${lookup(db, arg as QueryArg<Args>)}),
        ${countingSteps(calls, window)}
        SELECT found.*, counted.total AS rate_total, counted.oldest AS rate_oldest
        FROM found LEFT JOIN counted ON counted.key_id = found.rate_key::uuid`;
      return { compile: () => text.compile(db) };
    }),
  );
  return statement as (db: Queryable, args: Args & Window) => Promise<AlongRow<Row>[]>;
}

export function createPostgresRateLimiter(db: Db, clock: Clock, limit = RATE_LIMIT_PER_MINUTE): RateLimiter {
  const run = async (items: RateHit[]): Promise<RateResult[]> => {
    const nowMs = clock.now().getTime();
    const window = windowOf(nowMs);
    const bucket = window.rate_bucket;
    const groups = groupByKey(items);
    const keyIds = [...groups.keys()];
    const counts = keyIds.map((keyId) => groups.get(keyId)!.length);
    // One statement per batch: add this batch's calls to the current buckets, then read back
    // the window's total and its oldest non-empty bucket for every key in the batch.
    const rows = await sql<{ key_id: string; total: number; oldest: number | null }>`
      WITH ${countingSteps(sql`SELECT * FROM unnest(${keyIds}::uuid[], ${counts}::int[]) AS t(key_id, hits)`, window)}
      SELECT key_id, total, oldest FROM counted`.execute(db);
    const byKey = new Map(rows.rows.map((row) => [row.key_id, row]));
    const results: RateResult[] = new Array(items.length);
    for (const [keyId, indexes] of groups) {
      const row = byKey.get(keyId);
      const totals = { total: row?.total ?? indexes.length, oldestBucket: row?.oldest ?? bucket };
      indexes.forEach((itemIndex, position) => {
        results[itemIndex] = {
          decision: decide(totals, indexes.length, position, nowMs, limit),
          stamp: null,
        };
      });
    }
    return results;
  };
  const hit = createBatcher(run);
  const hitAlong = async <Args extends Record<string, unknown>, Row extends { rate_key: string | null }>(
    db: Db,
    lookup: AlongLookup<Args, Row>,
    args: Args,
  ): Promise<RateAlong<Row>> => {
    const nowMs = clock.now().getTime();
    const window = windowOf(nowMs);
    const [first] = await alongStatement(lookup)(db, { ...args, ...window });
    if (!first) return { row: undefined, decision: null };
    const { rate_total: total, rate_oldest: oldest, ...row } = first;
    const decision =
      total === null
        ? null
        : decide({ total, oldestBucket: oldest ?? window.rate_bucket }, 1, 0, nowMs, limit);
    return { row: row as unknown as Row, decision };
  };
  return { hit, hitAlong };
}

const lookupStatements = new WeakMap<object, AnyStatement>();

/** The lookup, then the hit: for limiters whose counts live outside the database. */
async function lookupThenHit<Args extends Record<string, unknown>, Row extends { rate_key: string | null }>(
  hit: RateLimiter['hit'],
  db: Db,
  lookup: AlongLookup<Args, Row>,
  args: Args,
): Promise<RateAlong<Row>> {
  const statement = madeFor(lookupStatements, lookup, () => compiledOnce(lookup));
  const row = (await statement(db, args))[0] as Row | undefined;
  if (!row || row.rate_key === null) return { row, decision: null };
  const { decision } = await hit({ keyId: row.rate_key });
  return { row, decision };
}

export function createRedisRateLimiter(
  redis: Redis,
  clock: Clock,
  limit = RATE_LIMIT_PER_MINUTE,
): RateLimiter {
  const run = async (items: RateHit[]): Promise<RateResult[]> => {
    const nowMs = clock.now().getTime();
    const bucket = Math.floor(nowMs / 1000 / BUCKET_SECONDS);
    const groups = groupByKey(items);
    const pipeline = redis.pipeline();
    const order: { keyId: string; stampKey: string | undefined }[] = [];
    for (const [keyId, indexes] of groups) {
      const stampKey = items[indexes[0]!]!.stampKey;
      order.push({ keyId, stampKey });
      const current = `tb:rl:${keyId}:${bucket}`;
      pipeline.incrby(current, indexes.length);
      pipeline.expire(current, WINDOW_SECONDS + BUCKET_SECONDS);
      pipeline.mget(
        Array.from({ length: BUCKETS_BACK }, (_, back) => `tb:rl:${keyId}:${bucket - BUCKETS_BACK + back}`),
      );
      pipeline.get(stampKey ?? 'tb:none');
    }
    const replies = (await pipeline.exec()) ?? [];
    const results: RateResult[] = new Array(items.length);
    order.forEach(({ keyId }, groupIndex) => {
      const base = groupIndex * 4;
      for (const reply of replies.slice(base, base + 4)) if (reply[0]) throw reply[0];
      const current = Number(replies[base]?.[1] ?? 0);
      const previous = (replies[base + 2]?.[1] as (string | null)[]) ?? [];
      const stamp = (replies[base + 3]?.[1] as string | null) ?? null;
      let total = current;
      let oldest: number | null = null;
      previous.forEach((value, back) => {
        const hits = Number(value ?? 0);
        total += hits;
        if (hits > 0 && oldest === null) oldest = bucket - BUCKETS_BACK + back;
      });
      const indexes = groups.get(keyId)!;
      const totals = { total, oldestBucket: oldest ?? bucket };
      indexes.forEach((itemIndex, position) => {
        results[itemIndex] = { decision: decide(totals, indexes.length, position, nowMs, limit), stamp };
      });
    });
    return results;
  };
  const hit = createBatcher(run);
  return { hit, hitAlong: (db, lookup, args) => lookupThenHit(hit, db, lookup, args) };
}

/** Drops buckets that have left every window; run by the housekeeping job. */
export async function pruneRateBuckets(db: Db, clock: Clock): Promise<number> {
  const bucket = Math.floor(clock.now().getTime() / 1000 / BUCKET_SECONDS);
  const result = await db
    .deleteFrom('rate_buckets')
    .where('bucket_start', '<', bucket - BUCKETS_BACK - 1)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  return {
    'ratelimit-limit': String(decision.limit),
    'ratelimit-remaining': String(decision.remaining),
    'ratelimit-reset': String(decision.resetSeconds),
  };
}
