import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import { decodeCursor, PAGE_SIZE, pageOf } from '../../core/cursor.ts';
import { AppError } from '../../core/errors.ts';
import { WRITER_ROLES } from '../../core/roles.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import type { IntegrationCaller } from '../../platform/http/context.ts';
import { requireRole } from '../spaces/index.ts';
import { type ContactAddressInput, checkContactName, normalizeAddresses, type Requisites } from './domain.ts';
import type { ContactCreateBody } from './schemas.ts';
import * as store from './store.ts';

export type ContactsDeps = { db: Db; clock: Clock };

// Fields of ContactOut the service does not compute yet: they are filled by features still to
// come (screening, collections, payments), and shown with their empty values until then.
const NOT_YET_COMPUTED = {
  tax_id_expected_format: '',
  collection_tone: null,
  last_paid_on: null,
  last_paid_usd: null,
  screening: null,
  whitelist_reset: false,
} as const;

export function presentContact(row: store.ContactRow, addresses: readonly store.ContactAddressRow[]) {
  return {
    id: row.id,
    name: row.name,
    note: row.note,
    kind: row.kind,
    whitelisted: row.whitelisted,
    compliance: row.compliance,
    addresses: [...addresses]
      .sort((a, b) => a.position - b.position)
      .map((address) => ({
        id: address.id,
        label: address.label,
        address: address.address,
        chain: address.chain,
        details: address.details,
        is_primary: address.is_primary,
        network: address.network,
        requisites: address.requisites as Requisites | null,
      })),
    address: row.address,
    country: row.country,
    email: row.email,
    phone: row.phone,
    reg_number: row.reg_number,
    tax_id: row.tax_id,
    identity_id: row.identity_id,
    tags: row.tags,
    save_to_book: row.saved_to_book,
    ...NOT_YET_COMPUTED,
  };
}

/** Addresses as the API takes them, with what a field left out means filled in. */
export function addressInputs(addresses: ContactCreateBody['addresses']): ContactAddressInput[] {
  return (addresses ?? []).map((address) => ({
    label: address.label ?? '',
    address: address.address ?? '',
    chain: address.chain ?? null,
    network: address.network ?? null,
    details: address.details ?? '',
    is_primary: address.is_primary ?? false,
    requisites: address.requisites ?? null,
  }));
}

/** Creates a contact in the caller's space, with its addresses in the order given. */
export async function createContact(
  tx: Queryable,
  clock: Clock,
  caller: Pick<IntegrationCaller, 'spaceId'>,
  body: ContactCreateBody,
) {
  const addresses = normalizeAddresses(addressInputs(body.addresses));
  const contact: store.ContactRow = {
    id: randomUUID(),
    space_id: caller.spaceId,
    name: checkContactName(body.name),
    kind: body.kind ?? 'person',
    note: body.note ?? '',
    address: body.address ?? '',
    country: body.country ?? '',
    email: body.email ?? '',
    phone: body.phone ?? '',
    reg_number: body.reg_number ?? '',
    tax_id: body.tax_id ?? '',
    compliance: body.compliance ?? '',
    identity_id: body.identity_id ?? null,
    whitelisted: body.whitelisted ?? false,
    saved_to_book: body.save_to_book ?? false,
    tags: body.tags ?? [],
    created_at: clock.now(),
  };
  const addressRows: store.ContactAddressRow[] = addresses.map((address, position) => ({
    id: randomUUID(),
    space_id: caller.spaceId,
    contact_id: contact.id,
    position,
    ...address,
  }));
  await store.insertContact(tx, contact, addressRows);
  return presentContact(contact, addressRows);
}

/** For other features: whether a contact belongs to the space. */
export function contactExists(db: Queryable, spaceId: string, contactId: string): Promise<boolean> {
  return store.contactExists(db, spaceId, contactId);
}

/**
 * For invoices (save_contact): updates the named contact's requisites, or creates a contact
 * saved to the book when none is named or the named one is not in the space. Returns its id.
 */
export async function saveInvoiceContact(
  tx: Queryable,
  clock: Clock,
  spaceId: string,
  contactId: string | null,
  fields: store.ContactRequisites,
): Promise<string> {
  const requisites = { ...fields, name: fields.name.slice(0, 120) };
  if (contactId !== null && (await store.updateRequisites(tx, spaceId, contactId, requisites)))
    return contactId;
  const contact: store.ContactRow = {
    id: randomUUID(),
    space_id: spaceId,
    kind: 'company',
    note: '',
    compliance: '',
    identity_id: null,
    whitelisted: false,
    saved_to_book: true,
    tags: [],
    created_at: clock.now(),
    ...requisites,
  };
  await store.insertContact(tx, contact, []);
  return contact.id;
}

/** For payments out: a contact's name and the bank requisites it is paid to, if any. */
export async function findContactPayee(db: Queryable, spaceId: string, contactId: string) {
  const found = await store.findPayee(db, spaceId, contactId);
  if (!found) return undefined;
  return { name: found.name, requisites: found.requisites as Requisites | null };
}

/** The Contacts screen and its app API: the space's address book, newest first, 50 a page. */
export async function listContactsInApp(
  deps: ContactsDeps,
  userId: string,
  spaceId: string,
  query: { cursor?: string | undefined },
) {
  await requireRole(deps.db, spaceId, userId);
  const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  if (query.cursor !== undefined && before === undefined) {
    throw new AppError('invalid_request', 'The cursor is not one this list gave out.', { field: 'cursor' });
  }
  const { contacts, addresses } = await store.listSavedContacts(deps.db, spaceId, before, PAGE_SIZE + 1);
  const page = pageOf(contacts, (row) => ({ at: row.created_at, id: row.id }));
  return {
    items: page.items.map((row) =>
      presentContact(
        row,
        addresses.filter((address) => address.contact_id === row.id),
      ),
    ),
    next_cursor: page.next_cursor,
  };
}

/** A contact made in the app goes into the book's address book; members and up may add one. */
export async function createContactInApp(
  deps: ContactsDeps,
  userId: string,
  spaceId: string,
  body: ContactCreateBody,
) {
  await requireRole(deps.db, spaceId, userId, WRITER_ROLES);
  return deps.db
    .transaction()
    .execute((tx) => createContact(tx, deps.clock, { spaceId }, { ...body, save_to_book: true }));
}
