import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.ts';

// The integrator's kit as a consumer meets it on npm: the three packages are built
// (`npm run packages:build`) and packed (`npm pack`), the tarballs are installed into a throwaway
// project outside the repository (our packages from the tarball files only; express, fastify and
// the type packages through npm's cache), then a plain-Node ESM script there charges through a
// real Tollbook server, and `tsc --noEmit` type-checks a TypeScript consumer against the .d.ts.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIXTURES = fileURLToPath(new URL('./fixtures/package-consumer/', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const TEST_CARD = { number: '4242424242424242', exp: '12/34', cvc: '123' };

/** npm as a consumer runs it: none of this repository's npm_* settings (workspace, script). */
function consumerEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
}

let work: string;
let consumer: string;
let h: Harness;
let tollbookUrl: string;
let key: string;
let accountId: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'tollbook-kit-'));
  const tarballs = join(work, 'tarballs');
  consumer = join(work, 'consumer');
  mkdirSync(tarballs);
  mkdirSync(consumer);
  await run('npm', ['run', 'packages:build'], { cwd: ROOT });
  await run(
    'npm',
    [
      'pack',
      '--pack-destination',
      tarballs,
      '-w',
      'packages/client',
      '-w',
      'packages/express',
      '-w',
      'packages/fastify',
    ],
    { cwd: ROOT, env: consumerEnv() },
  );
  const packed = readdirSync(tarballs).filter((name) => name.endsWith('.tgz'));
  expect(packed.sort()).toEqual([
    'tollbook-client-0.1.0.tgz',
    'tollbook-express-0.1.0.tgz',
    'tollbook-fastify-0.1.0.tgz',
  ]);

  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'kit-consumer', private: true, type: 'module' }, null, 2),
  );
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
      },
      files: ['consumer.ts'],
    }),
  );
  copyFileSync(join(FIXTURES, 'consume.mjs'), join(consumer, 'consume.mjs'));
  copyFileSync(join(FIXTURES, 'consumer.ts'), join(consumer, 'consumer.ts'));
  await run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      ...packed.map((name) => join(tarballs, name)),
      'express@^5',
      'fastify@^5',
      '@types/express@^5',
      '@types/node@^20',
    ],
    { cwd: consumer, env: consumerEnv() },
  );

  h = await createHarness();
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  tollbookUrl = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  const world = await h.world({ scopes: ['payments'] });
  key = world.key.key;
  accountId = (await h.makeWallet(world.spaceId)).id;
}, 240_000);
afterAll(async () => {
  await h?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Funds a caller as a real one would: a refused charge's top-up request, paid by card. */
async function fund(clientRef: string) {
  const refused = await h.inject({
    method: 'POST',
    url: '/integration/charges',
    key,
    payload: { client_ref: clientRef, account_id: accountId, amount: '1000000', top_up_amount: '5' },
  });
  const token = refused.json().top_up.token as string;
  const paid = await fetch(`${tollbookUrl}/pay/${token}/card`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(TEST_CARD),
  });
  expect(paid.status).toBe(200);
}

it('installs from the tarballs with dist only as entry points', async () => {
  const { stdout } = await run('npm', ['ls', '--json', '--depth=0'], { cwd: consumer, env: consumerEnv() });
  const tree = JSON.parse(stdout) as { dependencies: Record<string, { version: string; resolved: string }> };
  for (const name of ['@tollbook/client', '@tollbook/express', '@tollbook/fastify']) {
    expect(tree.dependencies[name]?.version).toBe('0.1.0');
    expect(tree.dependencies[name]?.resolved).toMatch(/^file:.*\.tgz$/);
  }
  const resolved = await run(
    process.execPath,
    ['--input-type=module', '-e', "console.log(import.meta.resolve('@tollbook/express'))"],
    { cwd: consumer },
  );
  expect(resolved.stdout.trim()).toMatch(/node_modules\/@tollbook\/express\/dist\/index\.js$/);
});

it('charges and refuses through the packed packages from a plain Node ESM script', async () => {
  const funded = `kit-funded-${Date.now()}`;
  const fresh = `kit-new-${Date.now()}`;
  await fund(funded);
  const { stdout } = await run(process.execPath, ['consume.mjs'], {
    cwd: consumer,
    env: {
      ...consumerEnv(),
      TOLLBOOK_URL: tollbookUrl,
      TOLLBOOK_KEY: key,
      ACCOUNT_ID: accountId,
      FUNDED_CALLER: funded,
      NEW_CALLER: fresh,
    },
  });
  const seen = JSON.parse(stdout);
  expect(seen.clientPaid).toEqual({ paid: true, charged: '0.25' });
  expect(seen.clientRefused.paid).toBe(false);
  expect(seen.clientRefused.topUpUrl).toContain('/pay/');
  expect(seen.clientError).toEqual({ status: 422, code: expect.any(String) });
  expect(seen.forgedWebhook).toBe('TollbookWebhookError');
  for (const flavour of ['express', 'fastify']) {
    expect(seen[flavour].funded).toEqual({ status: 200, body: { served: flavour, charged: '0.25' } });
    expect(seen[flavour].unfunded.status).toBe(402);
    expect(seen[flavour].unfunded.body).toMatchObject({
      error: 'insufficient_balance',
      top_up: { url: expect.stringContaining('/pay/') },
      balance_url: expect.stringContaining('/credit/'),
    });
  }
});

it('type-checks a TypeScript consumer against the published declarations', async () => {
  const result = await run(process.execPath, [TSC, '--noEmit', '-p', 'tsconfig.json'], {
    cwd: consumer,
  }).then(
    () => ({ code: 0, output: '' }),
    (error: { code: number; stdout: string }) => ({ code: error.code, output: error.stdout }),
  );
  expect(result.output).toBe('');
  expect(result.code).toBe(0);
});
