import { randomUUID } from 'node:crypto';
import { type ChangedFields, changedFields } from '../../core/edits.ts';
import { AppError } from '../../core/errors.ts';
import { WRITER_ROLES } from '../../core/roles.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { requireRole } from '../spaces/index.ts';
import { type ContactAddress, checkContactName, normalizeAddresses } from './domain.ts';
import type { ContactPatchBody } from './schemas.ts';
import { addressInputs, type ContactsDeps, presentContact } from './service.ts';
import * as store from './store.ts';

// Editing a contact (app and app API): the fields given replace the ones held, checked by the
// same rules as a new contact (domain.ts), and every real change is written together with its
// record (who, when, each field before and after) in one transaction. Invoices keep their own
// snapshot of the buyer, so no edit here reaches a sent invoice.

const NOT_FOUND = 'No contact with this id in this book.';

/** The address list as an edit compares it: what a person set, without ids and positions. */
function comparableAddresses(rows: readonly (ContactAddress | store.ContactAddressRow)[]): ContactAddress[] {
  return rows.map((row) => ({
    label: row.label,
    address: row.address,
    chain: row.chain,
    network: row.network,
    details: row.details,
    is_primary: row.is_primary,
    requisites: row.requisites as ContactAddress['requisites'],
  }));
}

/** One contact of the book with its addresses, to any member. */
export async function readContactInApp(
  deps: ContactsDeps,
  userId: string,
  spaceId: string,
  contactId: string,
) {
  await requireRole(deps.db, spaceId, userId);
  const found = await store.findContact(deps.db, spaceId, contactId);
  if (!found) throw new AppError('not_found', NOT_FOUND);
  return presentContact(found.contact, found.addresses);
}

/**
 * Changes a contact for an owner, admin or member: its own fields and, when given, its whole
 * address list. The row is locked while the change is worked out, so two edits at once are
 * recorded one after the other, each against what the other left.
 */
export async function updateContactInApp(
  deps: ContactsDeps,
  userId: string,
  spaceId: string,
  contactId: string,
  patch: ContactPatchBody,
) {
  await requireRole(deps.db, spaceId, userId, WRITER_ROLES);
  const addresses =
    patch.addresses === undefined ? undefined : normalizeAddresses(addressInputs(patch.addresses));
  // Only the known fields reach the database; anything else in the body is ignored, never a column.
  const own: store.ContactFields = {
    name: patch.name === undefined ? undefined : checkContactName(patch.name),
    kind: patch.kind,
    email: patch.email,
    phone: patch.phone,
    address: patch.address,
    country: patch.country,
    reg_number: patch.reg_number,
    tax_id: patch.tax_id,
    note: patch.note,
    tags: patch.tags,
  };
  return inTransaction(deps.db, async (tx) => {
    const found = await store.findContact(tx, spaceId, contactId, true);
    if (!found) throw new AppError('not_found', NOT_FOUND);
    const held = { ...found.contact, addresses: comparableAddresses(found.addresses) };
    const changed = changedFields(held, { ...own, addresses });
    if (Object.keys(changed).length === 0) return presentContact(found.contact, found.addresses);
    const rows = addresses?.map((address, position) => ({
      id: randomUUID(),
      space_id: spaceId,
      contact_id: contactId,
      position,
      ...address,
    }));
    const changedOwn = Object.fromEntries(
      Object.keys(changed).flatMap((name) =>
        name === 'addresses' ? [] : [[name, own[name as keyof store.ContactFields]]],
      ),
    );
    await store.updateContact(tx, spaceId, contactId, changedOwn, changed.addresses ? rows : undefined);
    await store.insertEdit(tx, {
      id: randomUUID(),
      space_id: spaceId,
      contact_id: contactId,
      user_id: userId,
      changed,
      created_at: deps.clock.now(),
    });
    const after = await store.findContact(tx, spaceId, contactId);
    if (!after) throw new AppError('not_found', NOT_FOUND);
    return presentContact(after.contact, after.addresses);
  });
}

const EDITS_SHOWN = 50;

export type ContactEdit = { id: string; at: string; by: string; changed: ChangedFields };

/** A contact's recorded edits, newest first (its page lists them), to any member. */
export async function contactEditsInApp(
  deps: ContactsDeps,
  userId: string,
  spaceId: string,
  contactId: string,
): Promise<ContactEdit[]> {
  await requireRole(deps.db, spaceId, userId);
  const rows = await store.listEdits(deps.db, spaceId, contactId, EDITS_SHOWN);
  return rows.map((row) => ({
    id: row.id,
    at: row.created_at.toISOString(),
    by: row.by_name,
    changed: row.changed as ChangedFields,
  }));
}
