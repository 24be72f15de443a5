import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { createRuntime } from '../../src/runtime.ts';
import { describeDemo, seedDemo } from '../../src/seed.ts';
import { freshCommandDatabase } from '../support/command-database.ts';
import { CHAIN_START_TIMEOUT_MS } from './chain-setup.ts';

// The first `npm start`: the demo space gets a USDC account on the local chain whose address is
// proven, so a payment request minted with the printed key is quoted to machines at once.

describe('the demo space on the local chain', () => {
  it(
    'has a proven USDC account, printed with a ready mint command, that machines are quoted',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'tollbook-demo-'));
      // An empty database: embedded in DATA_DIR, or a new one on the suite's PostgreSQL.
      const database = await freshCommandDatabase();
      onTestFinished(() => database.drop());
      const config = loadConfig({
        DATA_DIR: dataDir,
        LOG_LEVEL: 'silent',
        CHAIN: '1',
        ...(database.url ? { DATABASE_URL: database.url } : {}),
      });
      const runtime = await createRuntime(config, { logger: false, chain: true });
      const app = await buildApp(runtime);
      try {
        const demo = await seedDemo(runtime);
        expect(demo?.wallet?.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
        expect(describeDemo(demo!, config.publicUrl)).toContain(demo!.wallet!.accountId);
        const minted = await app.inject({
          method: 'POST',
          url: '/integration/payment-requests',
          headers: { authorization: `Bearer ${demo!.key}` },
          payload: { account_id: demo!.wallet!.accountId, amount: '2' },
        });
        expect(minted.statusCode, minted.body).toBe(201);
        const token = minted.json().token as string;
        const quote = await app.inject({
          method: 'GET',
          url: `/pay/${token}`,
          headers: { accept: 'application/json' },
        });
        expect(quote.statusCode).toBe(402);
        expect(quote.json().accepts).toEqual([
          expect.objectContaining({
            network: 'eip155:31337',
            payTo: demo!.wallet!.address,
            amount: '2000000',
          }),
        ]);
      } finally {
        await app.close();
        await runtime.close();
      }
    },
    CHAIN_START_TIMEOUT_MS,
  );
});
