import { type Insertable, type Selectable, sql } from 'kysely';
import { assert } from '../../core/assert.ts';
import { type AmountE8, formatAmount } from '../../core/money.ts';
import type { Queryable } from '../../platform/db/database.ts';
import type {
  AutoStage,
  InvoiceDeliveriesTable,
  InvoicePaymentsTable,
  InvoicesTable,
} from '../../platform/db/schema.ts';
import { type OwedShare, owedShareOf } from './domain.ts';

// Kysely queries for the invoices feature's own tables.

export type InvoiceRow = Selectable<InvoicesTable>;
export type NewInvoiceRow = Insertable<InvoicesTable>;
export type InvoicePaymentRow = Selectable<InvoicePaymentsTable>;
export type DeliveryRow = Selectable<InvoiceDeliveriesTable>;

export async function insertInvoice(db: Queryable, row: NewInvoiceRow): Promise<InvoiceRow> {
  const inserted = await db.insertInto('invoices').values(row).returningAll().executeTakeFirstOrThrow();
  await moveOwed(db, inserted.space_id, null, owedShareOf(inserted));
  return inserted;
}

/** The columns an invoice's share of its book's owed sums is made of (domain.ts `owedShareOf`). */
const OWED_COLUMNS = [
  'kind',
  'status',
  'currency',
  'due_on',
  'total',
  'paid_amount',
  'credited_amount',
] as const;

type OwedDelta = { currency: string; dueOn: string; invoices: number; owed: AmountE8 };

/**
 * Moves an invoice's share of the owed-by-due-day sums from what it was to what it is, in the
 * caller's transaction: its old day loses it, its new day gains it (one day, when only the amount
 * or the status changed). The rows are written in key order, so two writers never wait on each
 * other's days crosswise. The table's CHECKs refuse a sum that would go negative.
 */
async function moveOwed(db: Queryable, spaceId: string, before: OwedShare | null, after: OwedShare | null) {
  const deltas = new Map<string, OwedDelta>();
  const add = (share: OwedShare, sign: 1 | -1) => {
    const key = `${share.currency}\u0000${share.dueOn}`;
    const delta = deltas.get(key) ?? {
      currency: share.currency,
      dueOn: share.dueOn,
      invoices: 0,
      owed: 0n as AmountE8,
    };
    delta.invoices += sign;
    delta.owed = (delta.owed + (sign === 1 ? share.open : -share.open)) as AmountE8;
    deltas.set(key, delta);
  };
  if (before) add(before, -1);
  if (after) add(after, 1);
  const changed = [...deltas.entries()]
    .filter(([, delta]) => delta.invoices !== 0 || delta.owed !== 0n)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, delta]) => delta);
  for (const delta of changed) {
    const owed = formatAmount(delta.owed);
    // A day that gains an invoice may have no row yet; one that keeps or loses invoices has one
    // (the invoice was counted there). PostgreSQL checks an insert's own values before it meets
    // a conflict, so a negative change is an update, never an upsert.
    if (delta.invoices > 0) {
      await db
        .insertInto('invoice_owed_days')
        .values({
          space_id: spaceId,
          currency: delta.currency,
          due_on: delta.dueOn,
          invoices: delta.invoices,
          owed,
        })
        .onConflict((conflict) =>
          conflict.columns(['space_id', 'currency', 'due_on']).doUpdateSet({
            invoices: sql<number>`invoice_owed_days.invoices + excluded.invoices`,
            owed: sql<string>`invoice_owed_days.owed + excluded.owed`,
          }),
        )
        .execute();
      continue;
    }
    const moved = await db
      .updateTable('invoice_owed_days')
      .set({
        invoices: sql<number>`invoices + ${delta.invoices}::int`,
        owed: sql<string>`owed + ${owed}::numeric`,
      })
      .where('space_id', '=', spaceId)
      .where('currency', '=', delta.currency)
      .where('due_on', '=', delta.dueOn)
      .executeTakeFirst();
    assert(
      moved.numUpdatedRows === 1n,
      `No owed sum for ${delta.currency} due ${delta.dueOn} held the invoice.`,
    );
  }
}

export function findInvoice(db: Queryable, spaceId: string, id: string) {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The invoice under a row lock: payments, void and sends on one invoice run one at a time. */
export function lockInvoice(db: Queryable, spaceId: string, id: string) {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export async function findLiveByNumber(db: Queryable, spaceId: string, number: string) {
  return db
    .selectFrom('invoices')
    .select(['id'])
    .where('space_id', '=', spaceId)
    .where('number', '=', number)
    .where('status', '<>', 'void')
    .executeTakeFirst();
}

export async function updateInvoice(
  db: Queryable,
  spaceId: string,
  id: string,
  changes: Partial<Insertable<InvoicesTable>>,
): Promise<InvoiceRow> {
  // A change that can move the invoice's share of the owed sums reads the share first, under the
  // row lock the update takes anyway; other changes (delivery marks, notes) write the row alone.
  const moves = OWED_COLUMNS.some((column) => changes[column] !== undefined);
  const before = moves
    ? await db
        .selectFrom('invoices')
        .select(OWED_COLUMNS)
        .where('space_id', '=', spaceId)
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirstOrThrow()
    : undefined;
  const updated = await db
    .updateTable('invoices')
    .set(changes)
    .where('space_id', '=', spaceId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  if (before) await moveOwed(db, spaceId, owedShareOf(before), owedShareOf(updated));
  return updated;
}

export async function insertPayment(db: Queryable, row: Insertable<InvoicePaymentsTable>) {
  await db.insertInto('invoice_payments').values(row).execute();
}

export function listPayments(db: Queryable, invoiceId: string): Promise<InvoicePaymentRow[]> {
  return db
    .selectFrom('invoice_payments')
    .selectAll()
    .where('invoice_id', '=', invoiceId)
    .orderBy('seq')
    .execute();
}

export async function insertDelivery(db: Queryable, row: Insertable<InvoiceDeliveriesTable>) {
  await db.insertInto('invoice_deliveries').values(row).execute();
}

export function listDeliveries(db: Queryable, invoiceId: string, purpose: 'send' | 'remind') {
  return db
    .selectFrom('invoice_deliveries')
    .selectAll()
    .where('invoice_id', '=', invoiceId)
    .where('purpose', '=', purpose)
    .orderBy('seq')
    .execute();
}

export function findByToken(db: Queryable, token: string) {
  return db.selectFrom('invoices').selectAll().where('token', '=', token).executeTakeFirst();
}

/**
 * Open invoices with automatic reminders on whose current stage has not gone out yet. The
 * stage boundaries come from the domain rule (reminderStage): `afterBefore` is the last due date
 * that is a week past, `onBefore` today, `firstBefore` the last due date three days ahead.
 */
export async function dueForReminder(
  db: Queryable,
  bounds: { afterBefore: string; onBefore: string; firstBefore: string },
  limit: number,
) {
  const result = await sql<{ id: string; space_id: string }>`
    SELECT id, space_id FROM (
      SELECT i.id, i.space_id, i.due_on,
        CASE WHEN i.due_on <= ${bounds.afterBefore}::date THEN 'after_due'
             WHEN i.due_on <= ${bounds.onBefore}::date THEN 'on_due'
             ELSE 'before_due' END AS stage
      FROM invoices i
      WHERE i.kind = 'invoice' AND i.status IN ('sent', 'partial') AND i.auto_remind
        AND i.reminders_paused_at IS NULL AND i.due_on <= ${bounds.firstBefore}::date
        AND (i.client_email <> '' OR EXISTS (SELECT 1 FROM contact_chats c WHERE c.space_id = i.space_id
          AND c.contact_id = i.contact_id AND c.disconnected_at IS NULL))
    ) due
    WHERE NOT EXISTS (SELECT 1 FROM invoice_deliveries d WHERE d.invoice_id = due.id AND d.auto_stage = due.stage)
    ORDER BY due.due_on, due.id
    LIMIT ${limit}`.execute(db);
  return result.rows;
}

/** The invoice's row, locked, or undefined when another process holds it. */
export function lockInvoiceIfFree(db: Queryable, spaceId: string, id: string) {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('id', '=', id)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
}

/** Records an automatic reminder's stage once: false when it went out already. */
export async function claimAutoStage(db: Queryable, row: Insertable<InvoiceDeliveriesTable>) {
  const result = await db
    .insertInto('invoice_deliveries')
    .values(row)
    .onConflict((conflict) => conflict.doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Links an automatic reminder's delivery to what carries it: its mail, or its chat post. */
export async function linkAutoDelivery(
  db: Queryable,
  invoiceId: string,
  stage: AutoStage,
  carrier: { mail_id: string } | { chat_post_id: string },
) {
  await db
    .updateTable('invoice_deliveries')
    .set(carrier)
    .where('invoice_id', '=', invoiceId)
    .where('auto_stage', '=', stage)
    .execute();
}

export function spaceDeliveries(
  db: Queryable,
  spaceId: string,
  invoiceId: string | undefined,
  limit: number,
) {
  let query = db
    .selectFrom('invoice_deliveries as d')
    .leftJoin('mail_outbox as m', 'm.id', 'd.mail_id')
    .selectAll('d')
    .select(['m.mail_file as sent_mail_file', 'm.state as mail_state'])
    .where('d.space_id', '=', spaceId);
  if (invoiceId !== undefined) query = query.where('d.invoice_id', '=', invoiceId);
  return query.orderBy('d.created_at', 'desc').orderBy('d.seq', 'desc').limit(limit).execute();
}

/** The filter of the Invoices list: kind, the status a reader sees, and the page's cursor. */
export type InvoiceListFilter = {
  kind?: 'invoice' | 'quote' | 'credit_note' | undefined;
  /** A visible status: a sent quote past its due date is filtered as quote_expired. */
  status?: InvoiceRow['status'] | undefined;
  before?: { at: Date; id: string } | undefined;
  /** Today (YYYY-MM-DD), which decides when a sent quote reads as expired. */
  today: string;
  limit: number;
};

/** A space's invoices, quotes and credit notes, newest first, one page from a (created_at, id) cursor. */
export function listInvoicesPage(db: Queryable, spaceId: string, filter: InvoiceListFilter) {
  let query = db.selectFrom('invoices').selectAll().where('space_id', '=', spaceId);
  if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
  if (filter.status === 'quote_expired') {
    query = query.where('status', '=', 'quote_sent').where('due_on', '<', filter.today);
  } else if (filter.status === 'quote_sent') {
    query = query.where('status', '=', 'quote_sent').where('due_on', '>=', filter.today);
  } else if (filter.status !== undefined) {
    query = query.where('status', '=', filter.status);
  }
  const before = filter.before;
  if (before) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', before.at),
        eb.and([eb('created_at', '=', before.at), eb('id', '<', before.id)]),
      ]),
    );
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
}

/** The payments of several invoices of one space in one query, in the order they were recorded. */
export function paymentsOfInvoices(
  db: Queryable,
  spaceId: string,
  invoiceIds: readonly string[],
): Promise<InvoicePaymentRow[]> {
  if (invoiceIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('invoice_payments')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('invoice_id', 'in', invoiceIds)
    .orderBy('seq')
    .execute();
}

/** Invoices of a contact waiting on the seller after a chat answer (features/chat lists them). */
export function listChatPending(db: Queryable, spaceId: string, contactId: string) {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('contact_id', '=', contactId)
    .where('kind', '=', 'invoice')
    .where('status', 'in', ['sent', 'partial'])
    .where((eb) =>
      eb.or([eb('payer_marked_paid_at', 'is not', null), eb('deferral_state', '=', 'requested')]),
    )
    .orderBy('due_on')
    .limit(200)
    .execute();
}

/** The numbers of some documents of a space, by id (to name the documents one links to). */
export function numbersOf(db: Queryable, spaceId: string, ids: readonly string[]) {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('invoices')
    .select(['id', 'number'])
    .where('space_id', '=', spaceId)
    .where('id', 'in', ids)
    .execute();
}

/** The quote an invoice was made from, when it was made from one. */
export function quoteOfInvoice(db: Queryable, spaceId: string, invoiceId: string) {
  return db
    .selectFrom('invoices')
    .select(['id', 'number'])
    .where('space_id', '=', spaceId)
    .where('kind', '=', 'quote')
    .where('invoice_id', '=', invoiceId)
    .executeTakeFirst();
}
