import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Chain, createChain } from '../../src/platform/chain/chain.ts';
import { buildChainApp, CHAIN_START_TIMEOUT_MS } from './chain-setup.ts';
import { freePort, startX402World, type X402World } from './x402-setup.ts';

// Two servers on one PostgreSQL and one chain, paying gas from the same wallet: each has its own
// nonce manager (as separate processes would), so only the database lock around a send keeps
// their transactions from taking the same nonce. (PostgreSQL pass only: embedded PGlite belongs
// to one process.)

const postgres = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== '';

describe.skipIf(!postgres)('x402 settlements from two servers sharing one gas wallet', () => {
  let w: X402World;
  let second: { chain: Chain; app: FastifyInstance; base: string };
  beforeAll(async () => {
    w = await startX402World();
    const chain = await createChain({
      local: true,
      localRpcUrl: w.local.rpcUrl,
      logger: pino({ level: 'silent' }),
      startTimeoutMs: CHAIN_START_TIMEOUT_MS,
    });
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const app = await buildChainApp(chain, { PUBLIC_URL: base, RATE_LIMIT_PER_MINUTE: '100000' });
    await app.listen({ port, host: '127.0.0.1' });
    second = { chain, app, base };
  }, CHAIN_START_TIMEOUT_MS * 2);
  afterAll(async () => {
    await second?.app.close();
    await second?.chain.close();
    await w?.close();
  });

  it('settles every payment when both servers send at once', async () => {
    const s = await w.seller();
    const requests = await Promise.all(
      Array.from({ length: 8 }, () => w.mint(s.key.key, '1', { account_id: s.account.id })),
    );
    const payers = await Promise.all(requests.map(() => w.payer(5_000_000n)));
    const nonceBefore = await w.gasNonce();
    const answers = await Promise.all(
      requests.map((request, index) => {
        const url = index % 2 === 0 ? request.url : request.url.replace(w.base, second.base);
        return w.payingFetch(payers[index]!)(url, { headers: { accept: 'application/json' } });
      }),
    );
    const bodies = await Promise.all(answers.map((answer) => answer.text()));
    expect(
      answers.map((answer) => answer.status),
      bodies.join('\n'),
    ).toEqual(requests.map(() => 200));
    expect(await w.gasNonce()).toBe(nonceBefore + requests.length);
    expect(await w.usdcOf(s.address)).toBe(8_000_000n);
  });
});
