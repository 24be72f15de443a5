import { execFile, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import {
  createSenders,
  tailDeliveries,
  verifyCommand,
  WebhookWorker,
} from '../src/features/webhooks/index.ts';
import { enqueueEvent } from '../src/platform/outbox/outbox.ts';
import { createHarness, type Harness } from './harness.ts';
import { sampleInvoicePaid, sampleMoneyIn } from './sample-events.ts';
import { freshCommandDatabase } from './support/command-database.ts';
import { startReceiver } from './webhook-receiver.ts';

// The developer's commands: `tollbook webhooks verify` and `tollbook webhooks tail`.

const BODY = Buffer.from(
  '{"event":"money.in","version":1,"at":"2026-01-01T00:00:00.000Z","amount":"1.00000000"}',
);
const sign = (secret: string, body: Buffer) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

function cli(args: string[], input: Buffer): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['bin/tollbook.mjs', ...args],
      { env: { ...process.env, LOG_LEVEL: 'silent' } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
    child.stdin!.end(input);
  });
}

describe('tollbook webhooks verify', () => {
  it('accepts the signature of the exact bytes and refuses anything else', () => {
    const out: string[] = [];
    const write = { write: (text: string) => out.push(text) };
    expect(verifyCommand('whsec_x', sign('whsec_x', BODY), BODY, write)).toBe(0);
    expect(verifyCommand('whsec_x', sign('whsec_y', BODY), BODY, write)).toBe(1);
    expect(
      verifyCommand('whsec_x', sign('whsec_x', BODY), Buffer.concat([BODY, Buffer.from('\n')]), write),
    ).toBe(1);
    expect(verifyCommand('whsec_x', 'deadbeef', BODY, write)).toBe(1);
    expect(out[0]).toContain('valid');
    expect(out[1]).toContain('invalid');
  });

  it('reads the body from standard input in the real command (exit 0 valid, 1 invalid, 2 usage)', async () => {
    const good = await cli(
      ['webhooks', 'verify', '--secret', 'whsec_x', '--signature', sign('whsec_x', BODY)],
      BODY,
    );
    expect(good, good.stderr).toMatchObject({ code: 0 });
    expect(good.stdout).toContain('valid');
    const bad = await cli(
      ['webhooks', 'verify', '--secret', 'whsec_z', '--signature', sign('whsec_x', BODY)],
      BODY,
    );
    expect(bad.code).toBe(1);
    const usage = await cli(['webhooks', 'verify', '--secret', 'whsec_x'], BODY);
    expect(usage.code).toBe(2);
  }, 60_000);
});

describe('tollbook worker', () => {
  it('runs the workers without HTTP until SIGTERM, then exits 0', async () => {
    const database = await freshCommandDatabase();
    onTestFinished(() => database.drop());
    const env = {
      ...process.env,
      DATA_DIR: mkdtempSync(join(tmpdir(), 'tollbook-worker-')),
      DATABASE_URL: database.url,
      LOG_LEVEL: 'silent',
    };
    const child = spawn(process.execPath, ['bin/tollbook.mjs', 'worker'], { env });
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('worker running')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`exited early with ${code}: ${stderr}`)));
    });
    const exited = new Promise<string>((resolve) =>
      child.once('exit', (code, signal) => resolve(`${code} ${signal}`)),
    );
    child.kill('SIGTERM');
    expect(await exited, stderr).toBe('0 null');
  }, 60_000);
});

describe('tollbook webhooks tail', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
  });
  afterAll(() => h.close());

  it('prints each delivery change of the space, both channels', async () => {
    const target = await startReceiver({
      statusFor: (arrival) => (arrival.headers['x-service-event'] === 'money.in' ? 500 : 200),
    });
    const senders = createSenders({ allowPrivate: true, resolver: h.deps.resolver });
    try {
      const { owner, spaceId, key } = await h.world({ webhook_url: target.url });
      await h.inject({
        method: 'POST',
        url: `/app/api/spaces/${spaceId}/subscriptions`,
        session: owner.token,
        payload: { url: target.url, events: [] },
      });
      const at = new Date();
      const keyEvent = await enqueueEvent(h.db, sampleInvoicePaid({ spaceId, keyId: key.id, at }));
      const bookEvent = await enqueueEvent(h.db, sampleMoneyIn({ spaceId, at }));
      const clock = new ManualClock(new Date());
      await new WebhookWorker(
        { db: h.db, clock, secrets: h.deps.secrets, senders },
        { spaceIds: [spaceId] },
      ).runOnce();
      const lines: string[] = [];
      let polls = 0;
      await tailDeliveries({ db: h.db, now: () => new Date() }, spaceId, {
        out: { write: (text: string) => lines.push(text) },
        intervalMs: 1,
        shouldStop: () => polls++ >= 2,
      });
      expect(lines).toHaveLength(2);
      const text = lines.join('');
      expect(text).toMatch(
        new RegExp(
          `delivered\\s+invoice\\.paid\\s+key ${key.id.slice(0, 8)}.*attempt 1/3.*event ${keyEvent}.*HTTP 200`,
        ),
      );
      expect(text).toMatch(
        new RegExp(`pending\\s+money\\.in\\s+subscription .*attempt 1/8.*event ${bookEvent}.*HTTP 500 next `),
      );
    } finally {
      await Promise.all([target.close(), senders.key.close(), senders.subscription.close()]);
    }
  });
});
