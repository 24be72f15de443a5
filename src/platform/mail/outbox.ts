import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.ts';
import { uuidv7 } from '../crypto.ts';
import type { Db, Queryable } from '../db/database.ts';
import type { Mailer, MailMessage, SentMail } from './mailer.ts';

// Mail leaves after commit. The transaction that decides a mail writes a mail_outbox row; the
// mail worker sends due rows outside any transaction and records the outcome:
// - accepted: `sent` (with the .eml file in development);
// - a definite no (an SMTP 5xx reply): `given_up` at once, with the server's words;
// - anything else (a 4xx reply, a refused or dropped connection, a server that went silent):
//   unknown, retried on the schedule below under the same Message-ID, so a receiver that did get
//   an earlier attempt can tell the repeat; `given_up` after the last attempt.

/** Delay before attempt n+1 after n failed attempts; the last entry ends the tries. */
export const MAIL_RETRY_DELAYS_MS = [30_000, 60_000, 5 * 60_000, 15 * 60_000, 60 * 60_000, 3 * 60 * 60_000];
export const MAIL_ATTEMPTS_MAX = MAIL_RETRY_DELAYS_MS.length + 1;
/** How long a claimed row is left to its worker before another may take it (past the SMTP timeouts). */
const CLAIM_LEASE_MS = 5 * 60_000;
const BATCH_MAX = 20;
const ERROR_CHARS_MAX = 500;

export type QueuedMail = {
  spaceId: string | null;
  to: string;
  cc?: string[];
  fromName?: string | undefined;
  subject: string;
  text: string;
  html: string;
  /** Attach this invoice's PDF, rendered when the mail is sent. */
  invoiceId?: string | undefined;
};

/** The Message-ID of one outbox row: a fresh id at the sender's domain. */
export function messageIdFor(from: string): string {
  const at = from.lastIndexOf('@');
  const rest = at < 0 ? '' : from.slice(at + 1);
  const end = rest.search(/[>\s]/);
  const domain = end < 0 ? rest : rest.slice(0, end);
  return `<${randomUUID()}@${domain || 'tollbook.local'}>`;
}

/** Writes the mail in the caller's transaction; answers the row's id. */
export async function enqueueMail(
  tx: Queryable,
  clock: Clock,
  from: string,
  mail: QueuedMail,
): Promise<string> {
  const id = uuidv7();
  const now = clock.now();
  await tx
    .insertInto('mail_outbox')
    .values({
      id,
      message_id: messageIdFor(from),
      space_id: mail.spaceId,
      recipient: mail.to,
      cc: mail.cc ?? [],
      from_name: mail.fromName ?? '',
      subject: mail.subject,
      body_text: mail.text,
      body_html: mail.html,
      invoice_id: mail.invoiceId ?? null,
      next_attempt_at: now,
      created_at: now,
    })
    .execute();
  return id;
}

/** What an attempt came to: sent, refused for good, or not known (retry). */
export type MailOutcome =
  | { kind: 'sent'; sent: SentMail }
  | { kind: 'refused'; reason: string }
  | { kind: 'unknown'; reason: string };

export function classifyMailError(error: unknown): MailOutcome {
  const reason = (error instanceof Error ? error.message : String(error)).slice(0, ERROR_CHARS_MAX);
  const code = (error as { responseCode?: unknown } | null)?.responseCode;
  if (typeof code === 'number' && code >= 500 && code < 600) return { kind: 'refused', reason };
  return { kind: 'unknown', reason };
}

export type MailWorkerDeps = {
  db: Db;
  clock: Clock;
  mailer: Mailer;
  /** The attachments of a row that names an invoice (its PDF), read and rendered outside any lock. */
  attachmentsFor?:
    | ((row: { spaceId: string; invoiceId: string }) => Promise<MailMessage['attachments']>)
    | undefined;
  logger?: Logger | undefined;
};

type Claimed = {
  id: string;
  message_id: string;
  space_id: string | null;
  recipient: string;
  cc: string[];
  from_name: string;
  subject: string;
  body_text: string;
  body_html: string;
  invoice_id: string | null;
  attempts: number;
};

/**
 * Which rows a round may take: every due row, or (tests sharing one database) those of some
 * spaces or to some recipients (mail of no space, such as a password reset).
 */
export type MailScope = { limit?: number; spaceIds?: string[]; recipients?: string[] };

/** Claims up to `limit` due rows: each gets a lease and one more attempt counted, then commits. */
async function claimDue(deps: MailWorkerDeps, scope: MailScope): Promise<Claimed[]> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (tx) => {
    let query = tx
      .selectFrom('mail_outbox')
      .select('id')
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', now);
    if (scope.spaceIds) query = query.where('space_id', 'in', scope.spaceIds);
    if (scope.recipients) query = query.where('recipient', 'in', scope.recipients);
    const due = await query
      .orderBy('next_attempt_at')
      .limit(scope.limit ?? BATCH_MAX)
      .forUpdate()
      .skipLocked()
      .execute();
    if (due.length === 0) return [];
    return tx
      .updateTable('mail_outbox')
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        next_attempt_at: new Date(now.getTime() + CLAIM_LEASE_MS),
      }))
      .where(
        'id',
        'in',
        due.map((row) => row.id),
      )
      .returning([
        'id',
        'message_id',
        'space_id',
        'recipient',
        'cc',
        'from_name',
        'subject',
        'body_text',
        'body_html',
        'invoice_id',
        'attempts',
      ])
      .execute();
  });
}

async function attempt(deps: MailWorkerDeps, row: Claimed): Promise<MailOutcome> {
  try {
    const attachments =
      row.invoice_id !== null && row.space_id !== null && deps.attachmentsFor
        ? await deps.attachmentsFor({ spaceId: row.space_id, invoiceId: row.invoice_id })
        : undefined;
    const sent = await deps.mailer.send({
      to: row.recipient,
      cc: row.cc,
      subject: row.subject,
      text: row.body_text,
      html: row.body_html,
      fromName: row.from_name || undefined,
      messageId: row.message_id,
      ...(attachments ? { attachments } : {}),
    });
    return { kind: 'sent', sent };
  } catch (error) {
    return classifyMailError(error);
  }
}

async function record(deps: MailWorkerDeps, row: Claimed, outcome: MailOutcome): Promise<void> {
  const now = deps.clock.now();
  const update = deps.db.updateTable('mail_outbox').where('id', '=', row.id).where('state', '=', 'pending');
  if (outcome.kind === 'sent') {
    await update
      .set({ state: 'sent', sent_at: now, mail_file: outcome.sent.file ?? null, last_error: '' })
      .execute();
    return;
  }
  const delay = MAIL_RETRY_DELAYS_MS[row.attempts - 1];
  const givingUp = outcome.kind === 'refused' || delay === undefined;
  deps.logger?.warn(
    { mailId: row.id, messageId: row.message_id, attempt: row.attempts, reason: outcome.reason, givingUp },
    givingUp ? 'mail not delivered; given up' : 'mail not delivered; retrying later',
  );
  await update
    .set(
      givingUp
        ? { state: 'given_up', last_error: outcome.reason }
        : { next_attempt_at: new Date(now.getTime() + delay), last_error: outcome.reason },
    )
    .execute();
}

/**
 * One round of the mail worker: sends the due rows one by one, each outside any transaction,
 * and records each outcome. Safe in many processes (rows are claimed with SKIP LOCKED and a lease).
 * Answers how many were sent.
 */
export async function drainMailOutbox(deps: MailWorkerDeps, scope: MailScope = {}): Promise<number> {
  if (!deps.mailer.available) return 0;
  let sent = 0;
  for (const row of await claimDue(deps, scope)) {
    const outcome = await attempt(deps, row);
    await record(deps, row, outcome);
    if (outcome.kind === 'sent') sent += 1;
  }
  return sent;
}
