import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../src/platform/config.ts';
import { createRuntime } from '../src/runtime.ts';
import { describeDemo, seedDemo } from '../src/seed.ts';
import { createHarness, type Harness } from './harness.ts';
import { freshCommandDatabase } from './support/command-database.ts';

const run = promisify(execFile);
const cli = (args: string[], env: Record<string, string>) =>
  run(process.execPath, ['bin/tollbook.mjs', ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: '', REDIS_URL: '', ...env },
  }).then(
    (out) => ({ code: 0, stdout: out.stdout, stderr: out.stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );

describe('start-up', () => {
  it('stops with exit code 2 and a sentence naming the variable when a setting is bad', async () => {
    const result = await run(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, PORT: 'eighty' },
    }).catch((error: { code: number; stderr: string }) => error);
    expect((result as { code: number }).code).toBe(2);
    expect((result as { stderr: string }).stderr).toContain(
      'Tollbook cannot start: PORT must be a whole number',
    );
  });

  it('creates the demo owner, space and a working key on an empty database, once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollbook-seed-'));
    // An empty database: embedded in DATA_DIR, or a new one on the suite's PostgreSQL.
    const database = await freshCommandDatabase();
    onTestFinished(() => database.drop());
    const config = loadConfig({
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      ...(database.url ? { DATABASE_URL: database.url } : {}),
    });
    const runtime = await createRuntime(config, { logger: false });
    try {
      const demo = await seedDemo(runtime);
      expect(demo?.key).toMatch(/^oit_[0-9A-Za-z]{43}$/);
      expect(describeDemo(demo!, 'http://localhost:8080')).toContain(demo!.key);
      expect(describeDemo(demo!, 'http://localhost:8080')).toContain('http://localhost:8080/app');
      expect(await seedDemo(runtime)).toBeUndefined();
      // A development master key was generated into the data dir and seals the secret.
      expect(readFileSync(join(dataDir, 'master.key'), 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await runtime.close();
    }
    // A fresh embedded database and the local chain: on a busy two-core machine that takes a while.
  }, 120_000);
});

describe('documentation routes', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(() => h.close());

  it('serves an OpenAPI 3.1 document built from the route schemas, with the integration routes and their scopes secured', async () => {
    const doc = (await h.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/integration/ping',
        '/integration/accounts',
        '/integration/contacts',
        '/app/api/spaces/{id}/keys',
      ]),
    );
    expect(doc.paths['/integration/accounts'].post.security).toEqual([{ integrationKey: [] }]);
    const bodyRef =
      doc.paths['/integration/accounts'].post.requestBody.content['application/json'].schema.$ref;
    expect(bodyRef).toBe('#/components/schemas/AccountCreate');
    const body = doc.components.schemas.AccountCreate;
    expect(body.properties.opening_balance['x-amount']).toBe('signed');
    expect(doc.paths['/livez']).toBeUndefined();
  });

  it('serves the API reference page at /docs', async () => {
    const res = await h.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('/openapi.json');
  });
});

describe('the tollbook command', () => {
  it('migrates, creates a space and owner, issues and revokes a key, and refuses bad input with exit 2', async () => {
    // A fresh database: embedded in DATA_DIR, or a new one on the suite's PostgreSQL.
    const database = await freshCommandDatabase();
    onTestFinished(() => database.drop());
    const env = { DATA_DIR: mkdtempSync(join(tmpdir(), 'tollbook-cli-')), DATABASE_URL: database.url };
    expect((await cli(['migrate'], env)).stdout).toMatch(/Applied: 0001_baseline.sql|up to date/);
    const created = await cli(
      ['spaces', 'create', '--name', 'Acme', '--owner-email', 'cli@example.com', '--plan', 'pro'],
      env,
    );
    expect(created.code).toBe(0);
    const spaceId = JSON.parse(created.stdout.slice(created.stdout.indexOf('{'))).id;
    const issued = await cli(
      [
        'keys',
        'issue',
        '--space',
        spaceId,
        '--owner-email',
        'cli@example.com',
        '--name',
        'k',
        '--scopes',
        'payments',
      ],
      env,
    );
    expect(issued.code).toBe(0);
    const key = JSON.parse(
      issued.stdout.slice(issued.stdout.indexOf('{'), issued.stdout.lastIndexOf('}') + 1),
    );
    expect(key.key).toMatch(/^oit_/);
    const revoked = await cli(
      ['keys', 'revoke', '--space', spaceId, '--key', key.id, '--owner-email', 'cli@example.com'],
      env,
    );
    expect(revoked.stdout).toContain('"status": "revoked"');
    const bad = await cli(
      [
        'keys',
        'issue',
        '--space',
        spaceId,
        '--owner-email',
        'cli@example.com',
        '--name',
        'k',
        '--scopes',
        'nope',
      ],
      env,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Unknown scopes: nope');
    expect((await cli(['frobnicate'], env)).code).toBe(2);
    // With embedded PGlite, five processes each start a database; on a busy two-core machine that
    // takes a while.
  }, 180_000);
});
