import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../platform/db/database.ts';
import { SIGNATURE_PREFIX, verifySignature } from './signature.ts';
import * as store from './store.ts';
import { startWebhookWorkers, type WebhookHost } from './worker.ts';

// The developer's commands: `tollbook worker`, `tollbook webhooks tail`, `tollbook webhooks verify`.
// cli.ts parses the arguments and hands them here.

type Output = { write(text: string): unknown };

/**
 * `tollbook worker`: runs only the background workers (no HTTP) until SIGINT or SIGTERM, for
 * scaling delivery out past the server processes.
 */
export async function runWorkerCommand(
  open: () => Promise<WebhookHost & { close(): Promise<void> }>,
): Promise<void> {
  const host = await open();
  const stop = startWebhookWorkers(host);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`Received ${signal}; stopping.\n`);
    stop()
      .then(() => host.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  // Announced only once the handlers are in place, so a supervisor may signal right away.
  process.stderr.write('Tollbook worker running: webhook fan-out and delivery. Stop with Ctrl-C.\n');
}

/** One journal row as a line: when, status, event, target, attempt, answer. */
export function formatDeliveryLine(row: store.DeliveryRow): string {
  const target =
    row.target_kind === 'key'
      ? `key ${row.key_id?.slice(0, 8)}`
      : `subscription ${row.subscription_id?.slice(0, 8)}`;
  const answer = row.last_status_code !== null ? `HTTP ${row.last_status_code}` : (row.last_error ?? '');
  const next = row.status === 'pending' ? ` next ${row.next_attempt_at.toISOString()}` : '';
  return [
    row.updated_at.toISOString(),
    row.status.padEnd(9),
    row.event.padEnd(26),
    target,
    `attempt ${row.attempts}/${row.attempts_max}`,
    `event ${row.event_id}`,
    `${answer}${next}`,
  ].join('  ');
}

/**
 * `tollbook webhooks tail --space ID`: prints every delivery of the space as it changes (both
 * channels), starting with the last few minutes, until stopped.
 */
export async function tailDeliveries(
  deps: { db: Db; now: () => Date },
  spaceId: string,
  options: { out: Output; intervalMs?: number; sinceMs?: number; shouldStop?: () => boolean },
): Promise<void> {
  let cursor = new Date(deps.now().getTime() - (options.sinceMs ?? 5 * 60_000));
  while (!options.shouldStop?.()) {
    const rows = await store.deliveriesChangedSince(deps.db, spaceId, cursor, 500);
    for (const row of rows) options.out.write(`${formatDeliveryLine(row)}\n`);
    const last = rows.at(-1);
    if (last) cursor = last.updated_at;
    if (rows.length < 500) await sleep(options.intervalMs ?? 1_000);
  }
}

/**
 * `tollbook webhooks verify --secret S --signature H < body`: checks a signature against the raw
 * bytes read from standard input. Returns the exit code (0 valid, 1 invalid).
 */
export function verifyCommand(secret: string, signature: string, body: Buffer, out: Output): number {
  if (!signature.startsWith(SIGNATURE_PREFIX)) {
    out.write(`invalid: the signature must look like ${SIGNATURE_PREFIX}<64 hex characters>\n`);
    return 1;
  }
  const valid = verifySignature(secret, body, signature);
  out.write(
    valid
      ? `valid (${body.length} bytes)\n`
      : `invalid: the signature does not match these ${body.length} bytes\n`,
  );
  return valid ? 0 : 1;
}

export async function readStandardInput(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
