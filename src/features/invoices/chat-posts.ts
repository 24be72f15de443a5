import type { Logger } from 'pino';
import { assert } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { formatMoneyForPeople } from '../../core/money.ts';
import { uuidv7 } from '../../platform/crypto.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import { readAmount } from '../ledger/index.ts';
import type { InvoiceChatPort } from './chat-port.ts';
import { renderInvoicePdf } from './pdf.ts';
import { invoiceSheet } from './pdf-sheet.ts';
import { publicPageUrl } from './presentation.ts';
import * as store from './store.ts';

// Invoices posted to a client's chat group leave after commit, as mail does. The send or
// reminder that decides a post checks the group and the plan (so it is refused at once when it
// cannot be made) and writes an invoice_chat_posts row in its own transaction; the chat worker
// posts due rows outside any transaction, the PDF rendered as the invoice is then, and records
// the outcome:
// - posted: `sent`, and the invoice is marked delivered in the app;
// - a definite no (no group any more, a plan below Pro, Telegram refusing with a 4xx): `given_up`
//   at once, with the reason;
// - anything else (Telegram unreachable, a timeout, 429 or 5xx): unknown, retried on the
//   schedule below; `given_up` after the last attempt.

/** Delay before attempt n+1 after n failed attempts; the last entry ends the tries. */
export const CHAT_POST_RETRY_DELAYS_MS = [30_000, 60_000, 5 * 60_000, 15 * 60_000, 60 * 60_000];
/** How long a claimed row is left to its worker before another may take it. */
const CLAIM_LEASE_MS = 5 * 60_000;
const BATCH_MAX = 20;
const ERROR_CHARS_MAX = 500;

export type ChatPostDeps = { clock: Clock; chat?: InvoiceChatPort | undefined };

/**
 * In the caller's transaction: refuses (503 without a bot, 422 without a group, 403 below Pro)
 * or queues the invoice's post to its contact's group. Answers the post's id.
 */
export async function queueChatPost(
  tx: Queryable,
  deps: ChatPostDeps,
  row: store.InvoiceRow,
  message: string,
  purpose: 'send' | 'remind',
): Promise<string> {
  if (!deps.chat)
    throw new AppError(
      'chat_unavailable',
      'The chat bot is not enabled on this server (TELEGRAM_BOT_TOKEN).',
      {
        via: 'chat',
      },
    );
  await deps.chat.checkPost(tx, row.space_id, row.contact_id);
  const contactId = row.contact_id;
  assert(contactId !== null, 'checkPost lets through only an invoice with a contact that has a group');
  const id = uuidv7();
  const now = deps.clock.now();
  await tx
    .insertInto('invoice_chat_posts')
    .values({
      id,
      space_id: row.space_id,
      invoice_id: row.id,
      contact_id: contactId,
      purpose,
      message,
      next_attempt_at: now,
      created_at: now,
    })
    .execute();
  return id;
}

export type ChatWorkerDeps = {
  db: Db;
  clock: Clock;
  publicUrl: string;
  chat: InvoiceChatPort;
  logger?: Logger | undefined;
};

/** Which rows a round may take: every due row, or (tests sharing one database) those of some spaces. */
export type ChatPostScope = { limit?: number; spaceIds?: string[] };

type Claimed = {
  id: string;
  space_id: string;
  invoice_id: string;
  contact_id: string;
  purpose: 'send' | 'remind';
  message: string;
  attempts: number;
};

/** Claims up to `limit` due rows: each gets a lease and one more attempt counted, then commits. */
async function claimDue(deps: ChatWorkerDeps, scope: ChatPostScope): Promise<Claimed[]> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (tx) => {
    let query = tx
      .selectFrom('invoice_chat_posts')
      .select('id')
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', now);
    if (scope.spaceIds) query = query.where('space_id', 'in', scope.spaceIds);
    const due = await query
      .orderBy('next_attempt_at')
      .limit(scope.limit ?? BATCH_MAX)
      .forUpdate()
      .skipLocked()
      .execute();
    if (due.length === 0) return [];
    return tx
      .updateTable('invoice_chat_posts')
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        next_attempt_at: new Date(now.getTime() + CLAIM_LEASE_MS),
      }))
      .where(
        'id',
        'in',
        due.map((row) => row.id),
      )
      .returning(['id', 'space_id', 'invoice_id', 'contact_id', 'purpose', 'message', 'attempts'])
      .execute();
  });
}

type PostOutcome =
  | { kind: 'sent' }
  | { kind: 'refused'; reason: string }
  | { kind: 'unknown'; reason: string };

function classify(error: unknown): PostOutcome {
  const reason = (error instanceof Error ? error.message : String(error)).slice(0, ERROR_CHARS_MAX);
  if (!(error instanceof AppError)) return { kind: 'unknown', reason };
  // Telegram unreachable or answering 429/5xx: the post may or may not be in the group.
  if (error.code === 'delivery_failed' && error.details?.reason !== 'refused')
    return { kind: 'unknown', reason };
  // A missing bot is the operator's to fix; the post waits for it.
  if (error.code === 'chat_unavailable') return { kind: 'unknown', reason };
  return { kind: 'refused', reason };
}

/** Reads the invoice as it is now (no lock), renders its PDF and posts it. */
async function attempt(deps: ChatWorkerDeps, row: Claimed): Promise<PostOutcome> {
  try {
    const invoice = await store.findInvoice(deps.db, row.space_id, row.invoice_id);
    if (!invoice) return { kind: 'refused', reason: 'The invoice no longer exists.' };
    await deps.chat.postInvoice({
      spaceId: row.space_id,
      contactId: row.contact_id,
      invoiceId: invoice.id,
      sellerName: invoice.seller_name,
      number: invoice.number,
      total: formatMoneyForPeople(readAmount(invoice.total), invoice.currency),
      dueOn: invoice.due_on,
      url: publicPageUrl(deps.publicUrl, invoice.token),
      purpose: row.purpose,
      message: row.message,
      pdf: await renderInvoicePdf(await invoiceSheet(deps.db, invoice, deps.publicUrl)),
      fileName: `invoice-${invoice.number}.pdf`,
    });
    return { kind: 'sent' };
  } catch (error) {
    return classify(error);
  }
}

async function record(deps: ChatWorkerDeps, row: Claimed, outcome: PostOutcome): Promise<void> {
  const now = deps.clock.now();
  if (outcome.kind === 'sent') {
    await deps.db.transaction().execute(async (tx) => {
      await tx
        .updateTable('invoice_chat_posts')
        .set({ state: 'sent', sent_at: now, last_error: '' })
        .where('id', '=', row.id)
        .where('state', '=', 'pending')
        .execute();
      await store.updateInvoice(tx, row.space_id, row.invoice_id, { delivered_in_app: true });
    });
    return;
  }
  const delay = CHAT_POST_RETRY_DELAYS_MS[row.attempts - 1];
  const givingUp = outcome.kind === 'refused' || delay === undefined;
  deps.logger?.warn(
    {
      chatPostId: row.id,
      invoiceId: row.invoice_id,
      attempt: row.attempts,
      reason: outcome.reason,
      givingUp,
    },
    givingUp ? 'invoice chat post not made; given up' : 'invoice chat post not made; retrying later',
  );
  await deps.db
    .updateTable('invoice_chat_posts')
    .set(
      givingUp
        ? { state: 'given_up', last_error: outcome.reason }
        : { next_attempt_at: new Date(now.getTime() + delay), last_error: outcome.reason },
    )
    .where('id', '=', row.id)
    .where('state', '=', 'pending')
    .execute();
}

/**
 * One round of the chat worker: posts the due rows one by one, each outside any transaction,
 * and records each outcome. Safe in many processes (rows are claimed with SKIP LOCKED and a
 * lease). Answers how many were posted.
 */
export async function sendInvoiceChatPosts(deps: ChatWorkerDeps, scope: ChatPostScope = {}): Promise<number> {
  let sent = 0;
  for (const row of await claimDue(deps, scope)) {
    const outcome = await attempt(deps, row);
    await record(deps, row, outcome);
    if (outcome.kind === 'sent') sent += 1;
  }
  return sent;
}
