import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../platform/db/database.ts';
import { closeSenders, createSenders } from './delivery-service.ts';
import { REPLAY_MAX, replayDeliveries } from './service.ts';
import { SIGNATURE_PREFIX, verifySignature, verifyStandard } from './signature.ts';
import * as store from './store.ts';
import { startWebhookWorkers, type WebhookHost, WebhookWorker } from './worker.ts';

// The developer's commands: `tollbook worker`, `tollbook webhooks tail`, `tollbook webhooks verify`,
// `tollbook webhooks replay`.
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
 * `tollbook webhooks verify --secret S[,S2] --signature H [--webhook-id ID --timestamp T] < body`:
 * checks a signature against the raw bytes read from standard input, under any of the secrets
 * (both, while a rotation overlaps). H is X-Service-Signature (`sha256=<hex>`) or the Standard
 * Webhooks webhook-signature (`v1,<base64>`, several separated by spaces), which also needs the
 * webhook-id and webhook-timestamp headers. Returns the exit code (0 valid, 1 invalid).
 */
export function verifyCommand(
  secretList: string,
  signature: string,
  body: Buffer,
  out: Output,
  standard: { id?: string | undefined; timestamp?: string | undefined } = {},
): number {
  const secrets = secretList.split(',').filter((secret) => secret.length > 0);
  const verdict = signature.trim().startsWith('v1,')
    ? verifyStandardSignature(secrets, signature, body, standard)
    : verifyServiceSignature(secrets, signature, body);
  if (verdict.ok) {
    const which = secrets.length > 1 ? `; secret ${verdict.secretNumber} of ${secrets.length}` : '';
    out.write(`valid (${body.length} bytes${which})\n`);
    return 0;
  }
  out.write(`invalid: ${verdict.reason}\n`);
  return 1;
}

type Verdict = { ok: true; secretNumber: number } | { ok: false; reason: string };

function firstMatch(secrets: string[], matches: (secret: string) => boolean, reason: string): Verdict {
  const index = secrets.findIndex(matches);
  return index >= 0 ? { ok: true, secretNumber: index + 1 } : { ok: false, reason };
}

function verifyServiceSignature(secrets: string[], signature: string, body: Buffer): Verdict {
  if (!signature.startsWith(SIGNATURE_PREFIX)) {
    return {
      ok: false,
      reason: `the signature must look like ${SIGNATURE_PREFIX}<64 hex characters> or v1,<base64>`,
    };
  }
  return firstMatch(
    secrets,
    (secret) => verifySignature(secret, body, signature),
    `the signature does not match these ${body.length} bytes`,
  );
}

function verifyStandardSignature(
  secrets: string[],
  signature: string,
  body: Buffer,
  standard: { id?: string | undefined; timestamp?: string | undefined },
): Verdict {
  if (!standard.id || !standard.timestamp || !/^[0-9]{1,12}$/.test(standard.timestamp)) {
    return {
      ok: false,
      reason: 'a v1, signature needs --webhook-id and --timestamp (Unix seconds) from its headers',
    };
  }
  const message = { id: standard.id, timestamp: Number(standard.timestamp), body };
  return firstMatch(
    secrets,
    (secret) => verifyStandard(secret, message, signature),
    `no signature matches these ${body.length} bytes, this webhook-id and timestamp`,
  );
}

export async function readStandardInput(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * `tollbook webhooks replay --space ID (--event-id ID | --since TIME)`: makes the matching
 * deliveries of both channels due again (see replayDeliveries) and sends them now from this
 * process, as the same deliveries with their original event ids, then prints each row's outcome.
 * A worker elsewhere may pick some of them first; the leases keep every send single.
 */
export async function replayCommand(
  host: WebhookHost,
  spaceId: string,
  select: { eventId?: string; since?: Date },
  out: Output,
): Promise<number> {
  const clock: Clock = host.clock;
  const rows = await replayDeliveries({ db: host.database.db, clock }, spaceId, select);
  if (rows.length === 0) {
    out.write('No deliveries to replay (within the 30-day journal; held ones wait for Resume).\n');
    return 0;
  }
  out.write(`Replaying ${rows.length} deliveries.\n`);
  const senders = createSenders({
    allowPrivate: host.config.webhookAllowPrivate,
    allowList: host.config.webhookAllowList,
    resolver: host.resolver,
  });
  try {
    const worker = new WebhookWorker(
      {
        db: host.database.db,
        clock,
        secrets: host.secrets,
        senders,
        logger: host.logger === false ? undefined : host.logger,
      },
      { spaceIds: [spaceId] },
    );
    // Rounds until nothing is due: every replayed row gets its attempt (bounded by REPLAY_MAX).
    await worker.drain(Math.ceil(REPLAY_MAX / 200) + 1);
  } finally {
    await closeSenders(senders);
  }
  for (const row of rows) {
    const now = await store.findDelivery(host.database.db, spaceId, row.id);
    if (now) out.write(`${formatDeliveryLine(now)}\n`);
  }
  return 0;
}
