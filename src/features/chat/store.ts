import type { Insertable, Selectable } from 'kysely';
import type { Queryable } from '../../platform/db/database.ts';
import type { ChatMessagesTable, ContactChatsTable } from '../../platform/db/schema.ts';

// Kysely queries for the chat feature's own tables.

export type ChatRow = Selectable<ContactChatsTable>;
export type MessageRow = Selectable<ChatMessagesTable>;

/** Takes an update for this process; false when another process (or an earlier delivery) has it. */
export async function claimUpdate(db: Queryable, updateId: number, at: Date): Promise<boolean> {
  const result = await db
    .insertInto('telegram_updates')
    .values({ update_id: String(updateId), claimed_at: at })
    .onConflict((conflict) => conflict.column('update_id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function isUpdateClaimed(db: Queryable, updateId: number): Promise<boolean> {
  const row = await db
    .selectFrom('telegram_updates')
    .select('update_id')
    .where('update_id', '=', String(updateId))
    .executeTakeFirst();
  return row !== undefined;
}

export async function pruneUpdates(db: Queryable, before: Date): Promise<number> {
  const result = await db.deleteFrom('telegram_updates').where('claimed_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function insertLinkCode(
  db: Queryable,
  row: {
    code_hash: string;
    space_id: string;
    contact_id: string;
    key_id: string | null;
    created_at: Date;
    expires_at: Date;
  },
) {
  await db.insertInto('chat_link_codes').values(row).execute();
}

/** Spends a live code: the row lock makes a code usable once, whoever posts it first. */
export async function spendLinkCode(db: Queryable, codeHash: string, at: Date) {
  return db
    .updateTable('chat_link_codes')
    .set({ used_at: at })
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', at)
    .returning(['space_id', 'contact_id', 'key_id'])
    .executeTakeFirst();
}

export async function pruneLinkCodes(db: Queryable, before: Date): Promise<void> {
  await db.deleteFrom('chat_link_codes').where('expires_at', '<', before).execute();
}

export function liveChatOfContact(db: Queryable, spaceId: string, contactId: string) {
  return db
    .selectFrom('contact_chats')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('contact_id', '=', contactId)
    .where('disconnected_at', 'is', null)
    .executeTakeFirst();
}

/** The live connection of a Telegram group, under a row lock so one update of a group runs at a time. */
export function lockLiveChatOfGroup(db: Queryable, telegramChatId: string) {
  return db
    .selectFrom('contact_chats')
    .selectAll()
    .where('telegram_chat_id', '=', telegramChatId)
    .where('disconnected_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}

export async function disconnect(
  db: Queryable,
  where: { spaceId: string; contactId: string } | { telegramChatId: string },
  reason: 'replaced' | 'bot_removed',
  at: Date,
): Promise<number> {
  let query = db
    .updateTable('contact_chats')
    .set({ disconnected_at: at, disconnect_reason: reason })
    .where('disconnected_at', 'is', null);
  query =
    'telegramChatId' in where
      ? query.where('telegram_chat_id', '=', where.telegramChatId)
      : query.where('space_id', '=', where.spaceId).where('contact_id', '=', where.contactId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function insertChat(db: Queryable, row: Insertable<ContactChatsTable>): Promise<ChatRow> {
  return db.insertInto('contact_chats').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateChatTitle(db: Queryable, spaceId: string, id: string, title: string) {
  await db
    .updateTable('contact_chats')
    .set({ title })
    .where('space_id', '=', spaceId)
    .where('id', '=', id)
    .execute();
}

export async function insertMessage(db: Queryable, row: Insertable<ChatMessagesTable>): Promise<MessageRow> {
  return db.insertInto('chat_messages').values(row).returningAll().executeTakeFirstOrThrow();
}

/** The newest messages of a contact (both ways), newest first. */
export function listMessages(db: Queryable, spaceId: string, contactId: string, limit: number) {
  return db
    .selectFrom('chat_messages')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('contact_id', '=', contactId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export function findFileMessage(db: Queryable, spaceId: string, contactId: string, id: string) {
  return db
    .selectFrom('chat_messages')
    .selectAll()
    .where('space_id', '=', spaceId)
    .where('contact_id', '=', contactId)
    .where('id', '=', id)
    .where('kind', '=', 'file')
    .executeTakeFirst();
}

/** Contacts of the space with a live group, with the contact's name, newest connection first. */
export function listLiveChats(db: Queryable, spaceId: string) {
  return db
    .selectFrom('contact_chats')
    .innerJoin('contacts', (join) =>
      join
        .onRef('contacts.space_id', '=', 'contact_chats.space_id')
        .onRef('contacts.id', '=', 'contact_chats.contact_id'),
    )
    .select([
      'contact_chats.contact_id',
      'contact_chats.title',
      'contact_chats.connected_at',
      'contacts.name as contact_name',
    ])
    .where('contact_chats.space_id', '=', spaceId)
    .where('contact_chats.disconnected_at', 'is', null)
    .orderBy('contact_chats.connected_at', 'desc')
    .limit(500)
    .execute();
}

/** A group upgraded to a supergroup gets a new chat id; its live connection follows it. */
export async function moveGroup(db: Queryable, fromChatId: string, toChatId: string): Promise<void> {
  await db
    .updateTable('contact_chats')
    .set({ telegram_chat_id: toChatId })
    .where('telegram_chat_id', '=', fromChatId)
    .where('disconnected_at', 'is', null)
    .execute();
}
