import { afterAll, describe, expect, it } from 'vitest';
import { type AgentBook, makeAgentBook } from './agents-setup.ts';
import { createHarness, type Harness } from './harness.ts';

// The agent door finds the agent and counts its call in one statement (PostgreSQL limiter), or
// finds it and then counts in Redis. Either way each agent has its own limit per rolling minute,
// a refused call writes nothing, and a revoked agent is answered 401 before any count matters.

const LIMIT = 5;
const harnesses: Harness[] = [];
const books: AgentBook[] = [];
afterAll(async () => {
  for (const made of books) await made.ledgerSound();
  for (const harness of harnesses) await harness.close();
});

async function setUp(redis: boolean) {
  const h = await createHarness({ redis, env: { RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
  harnesses.push(h);
  const book = await makeAgentBook(h);
  books.push(book);
  return { h, book };
}

for (const redis of [false, true]) {
  describe(`the agent rate limit (${redis ? 'Redis' : 'PostgreSQL'})`, () => {
    it(`admits ${LIMIT} calls of an agent in a minute and refuses the next with 429, writing nothing`, async () => {
      const { h, book } = await setUp(redis);
      const agent = await book.active();
      const other = await book.active();
      const answers = await Promise.all(
        Array.from({ length: LIMIT }, () => book.call(agent, 'GET', '/agent/me')),
      );
      expect(answers.map((res) => res.statusCode)).toEqual(Array(LIMIT).fill(200));
      const remaining = answers.map((res) => Number(res.headers['ratelimit-remaining'])).sort();
      expect(remaining).toEqual([0, 1, 2, 3, 4]);
      expect(answers[0]!.headers['ratelimit-limit']).toBe(String(LIMIT));

      const refused = await book.agentTx(agent);
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ error: 'rate_limited', details: { limit: LIMIT } });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(70);
      const writes = await h.db
        .selectFrom('agent_writes')
        .select('id')
        .where('agent_id', '=', agent.id)
        .execute();
      expect(writes).toEqual([]);

      // Another agent of the same book counts on its own bucket.
      expect((await book.call(other, 'GET', '/agent/me')).statusCode).toBe(200);
    });

    it('answers a revoked or unknown token 401, not 429, and counts nothing for it', async () => {
      const { h, book } = await setUp(redis);
      const agent = await book.active();
      const revoked = await h.inject({
        method: 'DELETE',
        url: `/app/api/spaces/${book.spaceId}/agents/${agent.id}`,
        session: book.owner.token,
      });
      expect(revoked.statusCode).toBe(200);
      const answers = await Promise.all(
        Array.from({ length: LIMIT + 2 }, () => book.call(agent, 'GET', '/agent/me')),
      );
      expect(answers.map((res) => res.statusCode)).toEqual(Array(LIMIT + 2).fill(401));
      const unknown = await book.call({ ...agent, token: `oat_${'A'.repeat(43)}` }, 'GET', '/agent/me');
      expect(unknown.statusCode).toBe(401);
      if (!redis) {
        const counted = await h.db
          .selectFrom('rate_buckets')
          .select('hits')
          .where('key_id', '=', agent.id)
          .execute();
        expect(counted).toEqual([]);
      }
    });
  });
}
