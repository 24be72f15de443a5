import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import { createBatcher } from '../batch.ts';
import type { Db } from '../db/database.ts';

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

export interface RateLimiter {
  /** Counts one call on `keyId` and decides on it. */
  hit(item: RateHit): Promise<RateResult>;
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

/** A batch's hits on one key: their places in the batch, and the stamp key of the first. */
type KeyGroup = { keyId: string; stampKey: string | undefined; indexes: number[] };

function groupByKey(items: RateHit[]): KeyGroup[] {
  const groups = new Map<string, KeyGroup>();
  items.forEach((item, index) => {
    const group = groups.get(item.keyId);
    if (group) group.indexes.push(index);
    else groups.set(item.keyId, { keyId: item.keyId, stampKey: item.stampKey, indexes: [index] });
  });
  return [...groups.values()];
}

export function createPostgresRateLimiter(db: Db, clock: Clock, limit = RATE_LIMIT_PER_MINUTE): RateLimiter {
  const run = async (items: RateHit[]): Promise<RateResult[]> => {
    const nowMs = clock.now().getTime();
    const bucket = Math.floor(nowMs / 1000 / BUCKET_SECONDS);
    const since = bucket - BUCKETS_BACK;
    const groups = groupByKey(items);
    const keyIds = groups.map((group) => group.keyId);
    const counts = groups.map((group) => group.indexes.length);
    // One statement per batch: `bumped` adds this batch's calls to each key's current bucket;
    // `counted` reads back the window's total and its oldest non-empty bucket. The window's sum
    // reads the statement's snapshot, so it sees the earlier buckets only; the current one's
    // count comes from `bumped`.
    const rows = await sql<{ key_id: string; total: number; oldest: number | null }>`
      WITH bumped AS (
        INSERT INTO rate_buckets (key_id, bucket_start, hits)
        SELECT key_id, ${bucket}, hits FROM unnest(${keyIds}::uuid[], ${counts}::int[]) AS t(key_id, hits)
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
      )
      SELECT key_id, total, oldest FROM counted`.execute(db);
    const byKey = new Map(rows.rows.map((row) => [row.key_id, row]));
    const results: RateResult[] = new Array(items.length);
    for (const { keyId, indexes } of groups) {
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
  return { hit: createBatcher(run) };
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
    for (const { keyId, stampKey, indexes } of groups) {
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
    groups.forEach(({ indexes }, groupIndex) => {
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
      const totals = { total, oldestBucket: oldest ?? bucket };
      indexes.forEach((itemIndex, position) => {
        results[itemIndex] = { decision: decide(totals, indexes.length, position, nowMs, limit), stamp };
      });
    });
    return results;
  };
  const hit = createBatcher(run);
  return { hit };
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
