import type { Selectable } from 'kysely';
import type { Queryable } from '../../platform/db/database.ts';
import type { ContactAddressesTable, ContactsTable } from '../../platform/db/schema.ts';

export type ContactRow = Selectable<ContactsTable>;

export type ContactAddressRow = Selectable<ContactAddressesTable>;

/** Inserts a contact and its addresses; the caller's transaction makes them land together. */
export async function insertContact(
  db: Queryable,
  contact: ContactRow,
  addresses: readonly ContactAddressRow[],
) {
  await db.insertInto('contacts').values(contact).execute();
  if (addresses.length === 0) return;
  await db
    .insertInto('contact_addresses')
    .values(
      addresses.map((row) => ({
        ...row,
        requisites: row.requisites === null ? null : JSON.stringify(row.requisites),
      })),
    )
    .execute();
}

export async function contactExists(db: Queryable, spaceId: string, contactId: string): Promise<boolean> {
  const row = await db
    .selectFrom('contacts')
    .select('id')
    .where('space_id', '=', spaceId)
    .where('id', '=', contactId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The requisites an invoice carries for its client; used when an invoice saves its contact. */
export type ContactRequisites = Pick<
  ContactRow,
  'name' | 'email' | 'phone' | 'address' | 'country' | 'reg_number' | 'tax_id'
>;

export async function updateRequisites(
  db: Queryable,
  spaceId: string,
  contactId: string,
  fields: ContactRequisites,
): Promise<boolean> {
  const result = await db
    .updateTable('contacts')
    .set({ ...fields, saved_to_book: true })
    .where('space_id', '=', spaceId)
    .where('id', '=', contactId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A contact's name and the requisites it is paid to (its primary address first). */
export async function findPayee(db: Queryable, spaceId: string, contactId: string) {
  const contact = await db
    .selectFrom('contacts')
    .select('name')
    .where('space_id', '=', spaceId)
    .where('id', '=', contactId)
    .executeTakeFirst();
  if (!contact) return undefined;
  const address = await db
    .selectFrom('contact_addresses')
    .select('requisites')
    .where('space_id', '=', spaceId)
    .where('contact_id', '=', contactId)
    .where('requisites', 'is not', null)
    .orderBy('is_primary', 'desc')
    .orderBy('position')
    .executeTakeFirst();
  return { name: contact.name, requisites: (address?.requisites ?? null) as Record<string, unknown> | null };
}

/** The space's address book (contacts saved to it), newest first, from a (created_at, id) cursor. */
export async function listSavedContacts(
  db: Queryable,
  spaceId: string,
  before: { at: Date; id: string } | undefined,
  limit: number,
) {
  let query = db
    .selectFrom('contacts')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('saved_to_book', '=', true);
  if (before) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', before.at),
        eb.and([eb('created_at', '=', before.at), eb('id', '<', before.id)]),
      ]),
    );
  }
  const contacts = (await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()) as ContactRow[];
  const addresses =
    contacts.length === 0
      ? []
      : ((await db
          .selectFrom('contact_addresses')
          .selectAll()
          .where('space_id', '=', spaceId)
          .where(
            'contact_id',
            'in',
            contacts.map((contact) => contact.id),
          )
          .execute()) as ContactAddressRow[]);
  return { contacts, addresses };
}

/** One contact of the space with its addresses; `lock` holds its row until the transaction ends. */
export async function findContact(db: Queryable, spaceId: string, contactId: string, lock = false) {
  let query = db
    .selectFrom('contacts')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('id', '=', contactId);
  if (lock) query = query.forUpdate();
  const contact = (await query.executeTakeFirst()) as ContactRow | undefined;
  if (!contact) return undefined;
  const addresses = (await db
    .selectFrom('contact_addresses')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('contact_id', '=', contactId)
    .orderBy('position')
    .execute()) as ContactAddressRow[];
  return { contact, addresses };
}

/** The contact's own fields an edit may change. */
export type ContactFields = Partial<
  Pick<
    ContactRow,
    'name' | 'kind' | 'email' | 'phone' | 'address' | 'country' | 'reg_number' | 'tax_id' | 'note' | 'tags'
  >
>;

/** Writes an edit: the fields given, and when `addresses` is given the whole list anew. */
export async function updateContact(
  db: Queryable,
  spaceId: string,
  contactId: string,
  fields: ContactFields,
  addresses: readonly ContactAddressRow[] | undefined,
) {
  if (Object.keys(fields).length > 0) {
    await db
      .updateTable('contacts')
      .set(fields)
      .where('space_id', '=', spaceId)
      .where('id', '=', contactId)
      .execute();
  }
  if (addresses === undefined) return;
  await db
    .deleteFrom('contact_addresses')
    .where('space_id', '=', spaceId)
    .where('contact_id', '=', contactId)
    .execute();
  if (addresses.length === 0) return;
  await db
    .insertInto('contact_addresses')
    .values(
      addresses.map((row) => ({
        ...row,
        requisites: row.requisites === null ? null : JSON.stringify(row.requisites),
      })),
    )
    .execute();
}

/** The edit's record: who, when and what changed (in the edit's transaction). */
export async function insertEdit(
  db: Queryable,
  row: {
    id: string;
    space_id: string;
    contact_id: string;
    user_id: string;
    changed: Record<string, unknown>;
    created_at: Date;
  },
) {
  await db
    .insertInto('contact_edits')
    .values({ ...row, changed: JSON.stringify(row.changed) })
    .execute();
}

/** A contact's edits with who made them, newest first. */
export function listEdits(db: Queryable, spaceId: string, contactId: string, limit: number) {
  return db
    .selectFrom('contact_edits')
    .innerJoin('users', 'users.id', 'contact_edits.user_id')
    .select([
      'contact_edits.id',
      'contact_edits.changed',
      'contact_edits.created_at',
      'users.name as by_name',
    ])
    .where('contact_edits.space_id', '=', spaceId)
    .where('contact_edits.contact_id', '=', contactId)
    .orderBy('contact_edits.created_at', 'desc')
    .orderBy('contact_edits.id', 'desc')
    .limit(limit)
    .execute();
}
