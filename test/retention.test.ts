import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import { applyRetention, RETENTION_RULES, type RetentionRule } from '../src/platform/jobs/retention.ts';
import { createHarness, type Harness } from './harness.ts';

// Each retention rule deletes the rows past its age and nothing else, a small batch per
// statement. The rows here are dated in the year 2000 and the clock stands just after, so the
// rows of other test files (dated today) are never old for these runs.

const clock = new ManualClock('2001-01-01T00:00:00Z');
const HOUR_MS = 3_600_000;
const OLD = 5;
const KEPT = 2;

let h: Harness;
let spaceId: string;
let userId: string;
beforeAll(async () => {
  h = await createHarness();
  const world = await h.world();
  spaceId = world.spaceId;
  userId = world.owner.id;
});
afterAll(() => h.close());

/** Inserts one row of the rule's table dated `at` (by the rule's age column); answers its key. */
async function insertDated(rule: RetentionRule, at: Date): Promise<string> {
  const id = randomUUID();
  const before = new Date(at.getTime() - HOUR_MS);
  if (rule.table === 'sessions')
    await sql`INSERT INTO sessions (id, user_id, token_hash, csrf_token, created_at, expires_at)
      VALUES (${id}::uuid, ${userId}::uuid, ${`h-${id}`}, ${`c-${id}`}, ${before}, ${at})`.execute(h.db);
  if (rule.table === 'password_resets')
    await sql`INSERT INTO password_resets (id, user_id, token_hash, created_at, expires_at)
      VALUES (${id}::uuid, ${userId}::uuid, ${`h-${id}`}, ${before}, ${at})`.execute(h.db);
  if (rule.table === 'notifications')
    await sql`INSERT INTO notifications (id, space_id, user_id, kind, created_at)
      VALUES (${id}::uuid, ${spaceId}::uuid, ${userId}::uuid, 'test', ${at})`.execute(h.db);
  if (rule.table === 'x402_sign_in_nonces')
    await sql`INSERT INTO x402_sign_in_nonces (space_id, nonce, client_ref, accepted_at, expires_at)
      VALUES (${spaceId}::uuid, ${id}, ${`evm:0x${'ab'.repeat(20)}`}, ${before}, ${at})`.execute(h.db);
  if (rule.table === 'stripe_events')
    await sql`INSERT INTO stripe_events (event_id, type, outcome, received_at)
      VALUES (${id}, 'test', 'test', ${at})`.execute(h.db);
  return id;
}

/** How many of the rows (by the last column of the rule's key, which insertDated sets) remain. */
async function present(rule: RetentionRule, ids: string[]): Promise<number> {
  const marker = rule.key.at(-1) ?? 'id';
  const result = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM ${sql.table(rule.table)}
    WHERE ${sql.ref(marker)}::text = ANY(${ids}::text[])`.execute(h.db);
  return result.rows[0]!.n;
}

describe('retention jobs', () => {
  for (const rule of RETENTION_RULES) {
    it(`deletes ${rule.table} rows older than the rule keeps, in batches, and nothing newer`, async () => {
      const cutoff = clock.now().getTime() - rule.keepMs;
      const old: string[] = [];
      for (let n = 0; n < OLD; n += 1)
        old.push(await insertDated(rule, new Date(cutoff - (n + 1) * HOUR_MS)));
      const kept: string[] = [];
      for (let n = 0; n < KEPT; n += 1)
        kept.push(await insertDated(rule, new Date(cutoff + (n + 1) * HOUR_MS)));

      // Two batches of two per run: the first run leaves one old row for the next.
      const limits = { batchSize: 2, batchesMax: 2 };
      expect(await applyRetention(h.db, clock, rule, limits)).toBe(4);
      expect(await present(rule, old)).toBe(1);
      expect(await applyRetention(h.db, clock, rule, limits)).toBe(1);
      expect(await present(rule, old)).toBe(0);
      expect(await present(rule, kept)).toBe(KEPT);
      expect(await applyRetention(h.db, clock, rule, limits)).toBe(0);
    });
  }
});
