import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../src/platform/crypto.ts';
import { enqueueEvent } from '../src/platform/outbox/outbox.ts';
import { createHarness, type Harness } from './harness.ts';
import { sampleInvoicePaid, sampleMoneyIn } from './sample-events.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

// Real worker processes on one PostgreSQL (this file runs in the DATABASE_URL pass; the PGlite
// pass shows the same guarantees with two worker instances in one process, in
// webhooks.delivery.test.ts). The receiver records every arrival, so duplicates and overlapping
// attempts of one event would show.

const postgres = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== '';
const MASTER_KEY = randomBytes(32).toString('hex');

let h: Harness;
const children = new Set<ChildProcessWithoutNullStreams>();
const receivers: Receiver[] = [];

beforeAll(async () => {
  if (postgres) h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(receivers.map((receiver) => receiver.close()));
  if (postgres) await h.close();
});

function startWorker(
  spaceId: string,
  env: Record<string, string> = {},
): Promise<ChildProcessWithoutNullStreams> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/webhook-worker-process.ts'], {
    env: { ...process.env, MASTER_KEY, SPACE_IDS: spaceId, LOG_LEVEL: 'silent', ...env },
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`worker exited with ${code}: ${errors}`)));
  });
}

/** A space with a key webhook and a subscription to `target`, secrets sealed under MASTER_KEY. */
async function world(target: Receiver) {
  const { owner, spaceId, key } = await h.world({ webhook_url: target.url });
  const res = await h.inject({
    method: 'POST',
    url: `/app/api/spaces/${spaceId}/subscriptions`,
    session: owner.token,
    payload: { url: target.url, events: [] },
  });
  expect(res.statusCode, res.body).toBe(201);
  const box = new SecretBox(MASTER_KEY);
  await h.db
    .updateTable('integration_keys')
    .set({ webhook_secret_sealed: box.seal(key.webhookSecret) })
    .where('id', '=', key.id)
    .execute();
  await h.db
    .updateTable('webhook_subscriptions')
    .set({ secret_sealed: box.seal(res.json().secret) })
    .where('id', '=', res.json().id)
    .execute();
  return { spaceId, keyId: key.id };
}

async function enqueue(spaceId: string, keyId: string, pairs: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < pairs; index += 1) {
    const at = new Date();
    ids.push(
      await enqueueEvent(h.db, sampleInvoicePaid({ spaceId, keyId, at })),
      await enqueueEvent(h.db, sampleMoneyIn({ spaceId, at })),
    );
  }
  return ids;
}

function stopped(child: ChildProcessWithoutNullStreams): Promise<unknown> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  return exited;
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function untilAsync(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function undelivered(spaceId: string): Promise<number> {
  const rows = await h.db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('space_id', '=', spaceId)
    .where('status', '<>', 'delivered')
    .execute();
  return rows.length;
}

describe.skipIf(!postgres)('worker processes on one PostgreSQL', () => {
  it('two processes deliver every event exactly once, never one event twice at the same time', async () => {
    const target = await startReceiver({ delayMs: 10 });
    receivers.push(target);
    const { spaceId, keyId } = await world(target);
    const early = await enqueue(spaceId, keyId, 100);
    const workers = await Promise.all([
      startWorker(spaceId, { BATCH_SIZE: '16' }),
      startWorker(spaceId, { BATCH_SIZE: '16' }),
    ]);
    const late = await enqueue(spaceId, keyId, 100);
    const ids = [...early, ...late];
    await until(() => new Set(target.arrivals.map((arrival) => arrival.eventId)).size === ids.length, 60_000);
    // A clean stop records the attempts still in flight before the process ends.
    await Promise.all(workers.map((worker) => stopped(worker)));
    expect(target.arrivals).toHaveLength(ids.length);
    expect(ids.every((id) => target.countFor(id) === 1)).toBe(true);
    expect(target.overlapMax()).toBe(1);
    const pending = await h.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('space_id', '=', spaceId)
      .where('status', '<>', 'delivered')
      .execute();
    expect(pending).toEqual([]);
  }, 90_000);

  it('loses nothing when a worker is killed (SIGKILL) in the middle of a batch and another starts', async () => {
    const target = await startReceiver({ delayMs: 150 });
    receivers.push(target);
    const { spaceId, keyId } = await world(target);
    const ids = await enqueue(spaceId, keyId, 150);
    const first = await startWorker(spaceId, { LEASE_MS: '2000', BATCH_SIZE: '50' });
    await until(() => target.arrivals.length >= 20, 30_000);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    const delivered = new Set(target.arrivals.map((arrival) => arrival.eventId));
    expect(delivered.size).toBeLessThan(ids.length);
    const second = await startWorker(spaceId, { LEASE_MS: '2000', BATCH_SIZE: '50' });
    await until(() => new Set(target.arrivals.map((arrival) => arrival.eventId)).size === ids.length, 60_000);
    // An event the killed worker sent but never marked arrived already; its row is taken again
    // only when the dead worker's lease runs out, so wait for the rows, not only the arrivals.
    await untilAsync(async () => (await undelivered(spaceId)) === 0, 60_000);
    await stopped(second);
    // At least once: every event arrived; the ones in flight at the kill may have arrived twice.
    expect(ids.every((id) => target.countFor(id) >= 1)).toBe(true);
    const rows = await h.db
      .selectFrom('webhook_deliveries')
      .select(['status'])
      .where('space_id', '=', spaceId)
      .execute();
    expect(rows).toHaveLength(ids.length);
    expect(rows.every((row) => row.status === 'delivered')).toBe(true);
    expect(target.overlapMax()).toBe(1);
  }, 120_000);
});
