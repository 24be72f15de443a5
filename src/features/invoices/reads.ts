import { decodeCursor, PAGE_SIZE, pageOf } from '../../core/cursor.ts';
import { utcDateOf } from '../../core/day.ts';
import { AppError } from '../../core/errors.ts';
import { listSpaceAccounts } from '../accounts/index.ts';
import { listContactsInApp } from '../contacts/index.ts';
import { requireRole } from '../spaces/index.ts';
import { documentFileBase, renderInvoicePdf } from './pdf.ts';
import { invoiceSheet } from './pdf-sheet.ts';
import type { InvoiceListQueryBody } from './schemas.ts';
import { withSellerShown } from './seller.ts';
import { getInvoice, type InvoicesDeps, present } from './service.ts';
import * as store from './store.ts';

// What the owner's app reads about invoices, quotes and credit notes: the list, one document,
// its PDF, and the choices the New form offers. Any member of the space may read; the app API
// and the pages call these same functions.

const today = (deps: InvoicesDeps) => utcDateOf(deps.clock.now());

/** The Invoices list: newest first, 50 a page, filtered by kind and by the status a reader sees. */
export async function listInvoices(
  deps: InvoicesDeps,
  userId: string,
  spaceId: string,
  query: InvoiceListQueryBody,
) {
  await requireRole(deps.db, spaceId, userId);
  const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  if (query.cursor !== undefined && before === undefined) {
    throw new AppError('invalid_request', 'The cursor is not one this list gave out.', { field: 'cursor' });
  }
  const todayText = today(deps);
  const rows = await store.listInvoicesPage(deps.db, spaceId, {
    kind: query.kind,
    status: query.status,
    before,
    today: todayText,
    limit: PAGE_SIZE + 1,
  });
  const page = pageOf(rows, (row) => ({ at: row.created_at, id: row.id }));
  const payments = await store.paymentsOfInvoices(
    deps.db,
    spaceId,
    page.items.map((row) => row.id),
  );
  return {
    items: page.items.map((row) =>
      present(
        row,
        payments.filter((payment) => payment.invoice_id === row.id),
        deps.publicUrl,
        todayText,
      ),
    ),
    next_cursor: page.next_cursor,
  };
}

/** One invoice, quote or credit note of the space, with its payments; another space's is not found. */
export async function readInvoice(deps: InvoicesDeps, userId: string, spaceId: string, id: string) {
  await requireRole(deps.db, spaceId, userId);
  return getInvoice(deps, spaceId, id);
}

/** The document as a PDF, named after its number. */
export async function invoicePdfFile(deps: InvoicesDeps, userId: string, spaceId: string, id: string) {
  await requireRole(deps.db, spaceId, userId);
  const found = await store.findInvoice(deps.db, spaceId, id);
  if (!found) throw new AppError('not_found', 'No invoice with this id in this space.');
  const row = await withSellerShown(deps.db, found);
  return {
    filename: `${documentFileBase(row)}.pdf`,
    body: await renderInvoicePdf(await invoiceSheet(deps.db, row, deps.publicUrl)),
  };
}

/** How many saved contacts the New form's picker offers: the newest, four pages of the list. */
const CONTACT_PAGES_MAX = 4;
/** How many recent invoices a new credit note may name as the one it corrects. */
const CORRECTABLE_MAX = 200;

/** What the New form offers: the space's accounts, its saved contacts and the invoices a credit note may correct. */
export async function invoiceFormChoices(deps: InvoicesDeps, userId: string, spaceId: string) {
  await requireRole(deps.db, spaceId, userId);
  const accounts = (await listSpaceAccounts(deps.db, spaceId)).map((row) => ({
    id: row.id,
    name: row.name,
    currency: row.currency,
  }));
  const contacts: Awaited<ReturnType<typeof listContactsInApp>>['items'] = [];
  let cursor: string | undefined;
  for (let page = 0; page < CONTACT_PAGES_MAX; page += 1) {
    const listed = await listContactsInApp(deps, userId, spaceId, { cursor });
    contacts.push(...listed.items);
    if (listed.next_cursor === null) break;
    cursor = listed.next_cursor;
  }
  const recent = await store.listInvoicesPage(deps.db, spaceId, {
    kind: 'invoice',
    today: today(deps),
    limit: CORRECTABLE_MAX,
  });
  const correctable = recent
    .filter((row) => row.status === 'draft' || row.status === 'sent' || row.status === 'partial')
    .map((row) => ({ id: row.id, number: row.number, client_name: row.client_name, currency: row.currency }));
  return { accounts, contacts, correctable };
}

export type DocumentLink = { id: string; number: string };
export type DocumentLinks = {
  /** A credit note's invoice. */
  corrects: DocumentLink | null;
  /** An accepted quote's invoice. */
  invoice: DocumentLink | null;
  /** The quote an invoice was made from. */
  quote: DocumentLink | null;
};

/** The documents one document names, by number: a credit note's invoice, a quote's invoice and back. */
export async function documentLinks(
  db: Parameters<typeof store.numbersOf>[0],
  spaceId: string,
  document: { id: string; kind: string; corrects_invoice_id: string | null; invoice_id: string | null },
): Promise<DocumentLinks> {
  const named = [document.corrects_invoice_id, document.invoice_id].filter((id): id is string => id !== null);
  const numbers = await store.numbersOf(db, spaceId, named);
  const link = (id: string | null) => numbers.find((row) => row.id === id) ?? null;
  return {
    corrects: link(document.corrects_invoice_id),
    invoice: link(document.invoice_id),
    quote:
      document.kind === 'invoice' ? ((await store.quoteOfInvoice(db, spaceId, document.id)) ?? null) : null,
  };
}
