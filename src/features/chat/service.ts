import { randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.ts';
import { utcDateOf } from '../../core/day.ts';
import { AppError } from '../../core/errors.ts';
import { WRITER_ROLES } from '../../core/roles.ts';
import { sha256Hex } from '../../platform/crypto.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import type { IntegrationCaller } from '../../platform/http/context.ts';
import { enqueueEvent } from '../../platform/outbox/outbox.ts';
import { contactExists, findContactPayee } from '../contacts/index.ts';
import {
  type ChatAnswerDecision,
  type ChatInvoicePost,
  type InvoiceChatPort,
  markPaidByPayer,
  pendingChatAnswers,
  requestDeferral,
  settleChatAnswer,
} from '../invoices/index.ts';
import { planIncludesChat, requireRole, spaceNameAndPlan } from '../spaces/index.ts';
import {
  buttonData,
  clipText,
  DEFERRAL_DAYS,
  invoiceCaption,
  isWellFormedCode,
  LINK_CODE_LENGTH,
  LINK_CODE_TTL_MS,
  linkCodeFrom,
  linkCommand,
  parseButtonData,
  proposedDueDate,
  sniffContentType,
} from './domain.ts';
import type { FileStore } from './file-store.ts';
import * as store from './store.ts';
import type { ChatTransport } from './transport.ts';

export type ChatDeps = {
  db: Db;
  clock: Clock;
  publicUrl: string;
  files: FileStore;
  /** The bot; absent when TELEGRAM_BOT_TOKEN is not set, and every chat route answers 503. */
  transport: ChatTransport | undefined;
  logger?: Logger | undefined;
};

const today = (clock: Clock) => utcDateOf(clock.now());

export function requireBot(deps: { transport: ChatTransport | undefined }): ChatTransport {
  if (!deps.transport)
    throw new AppError(
      'chat_unavailable',
      'The chat bot is not enabled on this server: the operator sets TELEGRAM_BOT_TOKEN (see the README, "Chat (Telegram)").',
    );
  return deps.transport;
}

async function requireContact(db: Queryable, spaceId: string, contactId: string) {
  if (!(await contactExists(db, spaceId, contactId)))
    throw new AppError('not_found', 'No contact with this id in this space.');
}

async function requireChatPlan(db: Queryable, spaceId: string, what: string) {
  const space = await spaceNameAndPlan(db, spaceId);
  if (!planIncludesChat(space.plan))
    throw new AppError(
      'plan_required',
      `${what} needs the Pro plan or higher; this space is on ${space.plan}.`,
      {
        plan: space.plan,
        required: 'pro',
      },
    );
  return space;
}

/** POST …/telegram-link: a single-use code, 24 hours, for a contact of a space on Pro or higher. */
export async function createLinkCode(deps: ChatDeps, caller: IntegrationCaller, contactId: string) {
  const transport = requireBot(deps);
  await requireContact(deps.db, caller.spaceId, contactId);
  await requireChatPlan(deps.db, caller.spaceId, 'Connecting a chat group');
  const username = await transport.username();
  const code = linkCodeFrom(randomBytes(LINK_CODE_LENGTH));
  const now = deps.clock.now();
  await store.insertLinkCode(deps.db, {
    code_hash: sha256Hex(code),
    space_id: caller.spaceId,
    contact_id: contactId,
    key_id: caller.keyId,
    created_at: now,
    expires_at: new Date(now.getTime() + LINK_CODE_TTL_MS),
  });
  return { code, bot_username: username, command: linkCommand(code) };
}

function presentState(chat: store.ChatRow | undefined) {
  return {
    connected: chat !== undefined,
    title: chat?.title ?? null,
    connected_at: chat?.connected_at.toISOString() ?? null,
  };
}

/** GET …/chats: whether the contact's group is connected, its title and since when. */
export async function chatState(deps: ChatDeps, spaceId: string, contactId: string) {
  requireBot(deps);
  await requireContact(deps.db, spaceId, contactId);
  return presentState(await store.liveChatOfContact(deps.db, spaceId, contactId));
}

/** Where an update came from: the group, and who in it. */
export type Incoming = { updateId: number; chatId: string; chatType: string; title: string; author: string };

const LINK_REPLIES = {
  notGroup: 'Add me to your group with the seller and post the /link command there.',
  unknown: 'This link code is unknown, already used or expired. Ask the seller for a new one.',
  plan: 'This seller’s plan does not include chat any more; the group was not connected.',
} as const;

/** "/link <code>" in a group: connects it to the code's contact, replacing an earlier group. */
export async function linkGroup(deps: ChatDeps, incoming: Incoming & { code: string }): Promise<void> {
  const transport = requireBot(deps);
  const now = deps.clock.now();
  const reply = await deps.db.transaction().execute(async (tx) => {
    if (!(await store.claimUpdate(tx, incoming.updateId, now))) return null;
    if (incoming.chatType !== 'group' && incoming.chatType !== 'supergroup') return LINK_REPLIES.notGroup;
    if (!isWellFormedCode(incoming.code)) return LINK_REPLIES.unknown;
    const spent = await store.spendLinkCode(tx, sha256Hex(incoming.code), now);
    if (!spent) return LINK_REPLIES.unknown;
    const space = await spaceNameAndPlan(tx, spent.space_id);
    if (!planIncludesChat(space.plan)) return LINK_REPLIES.plan;
    // A group serves one contact, and a contact has one group: both earlier links end here.
    await store.disconnect(tx, { telegramChatId: incoming.chatId }, 'replaced', now);
    await store.disconnect(tx, { spaceId: spent.space_id, contactId: spent.contact_id }, 'replaced', now);
    await store.insertChat(tx, {
      id: randomUUID(),
      space_id: spent.space_id,
      contact_id: spent.contact_id,
      key_id: spent.key_id,
      telegram_chat_id: incoming.chatId,
      title: clipText(incoming.title, 255),
      connected_at: now,
    });
    return `${space.name}: this group is now connected. Invoices and answers from ${space.name} will arrive here, and what you write or send here reaches ${space.name}.`;
  });
  if (reply !== null) await transport.sendText(incoming.chatId, reply);
}

/** The bot was removed from the group (left or kicked): the group is disconnected. */
export async function groupLost(
  deps: ChatDeps,
  incoming: Pick<Incoming, 'updateId' | 'chatId'>,
): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (tx) => {
    if (!(await store.claimUpdate(tx, incoming.updateId, now))) return;
    await store.disconnect(tx, { telegramChatId: incoming.chatId }, 'bot_removed', now);
  });
}

/** The group became a supergroup (a new chat id): the connection moves with it. */
export async function groupMoved(
  deps: ChatDeps,
  incoming: Pick<Incoming, 'updateId' | 'chatId'> & { toChatId: string },
) {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (tx) => {
    if (!(await store.claimUpdate(tx, incoming.updateId, now))) return;
    await store.moveGroup(tx, incoming.chatId, incoming.toChatId);
  });
}

async function clientOf(tx: Queryable, chat: store.ChatRow): Promise<string> {
  return (await findContactPayee(tx, chat.space_id, chat.contact_id))?.name ?? '';
}

/** A text in a connected group: kept as sent (up to Telegram's limit) and client.question fires. */
export async function receiveText(deps: ChatDeps, incoming: Incoming & { text: string; messageId: number }) {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (tx) => {
    if (!(await store.claimUpdate(tx, incoming.updateId, now))) return;
    const chat = await store.lockLiveChatOfGroup(tx, incoming.chatId);
    if (!chat) return;
    const text = clipText(incoming.text);
    if (incoming.title !== '' && incoming.title !== chat.title)
      await store.updateChatTitle(tx, chat.space_id, chat.id, clipText(incoming.title, 255));
    await store.insertMessage(tx, {
      id: randomUUID(),
      space_id: chat.space_id,
      contact_id: chat.contact_id,
      chat_id: chat.id,
      direction: 'in',
      kind: 'text',
      text,
      author: clipText(incoming.author, 200),
      telegram_message_id: String(incoming.messageId),
      created_at: now,
    });
    if (chat.key_id === null) return;
    const client = await clientOf(tx, chat);
    await enqueueEvent(tx, {
      channel: 'key',
      spaceId: chat.space_id,
      keyId: chat.key_id,
      event: 'client.question',
      at: now,
      data: { contact_id: chat.contact_id, client, text },
    });
  });
}

export type IncomingFile = { fileId: string; fileSize: number | undefined; name: string };

/** A document or photo in a connected group: fetched, kept under the contact, client.file fires. */
export async function receiveFile(
  deps: ChatDeps,
  incoming: Incoming & { messageId: number; file: IncomingFile; maxBytes: number },
) {
  const transport = requireBot(deps);
  if (await store.isUpdateClaimed(deps.db, incoming.updateId)) return;
  const chat = await store.lockLiveChatOfGroup(deps.db, incoming.chatId);
  if (!chat) return;
  const tooLarge = `${incoming.file.name} is larger than 20 MB; it was not kept. Send a smaller file or a link.`;
  if ((incoming.file.fileSize ?? 0) > incoming.maxBytes) {
    if (await store.claimUpdate(deps.db, incoming.updateId, deps.clock.now()))
      await transport.sendText(incoming.chatId, tooLarge);
    return;
  }
  // Fetched before the transaction, so no database connection waits on Telegram; a second
  // process fetching the same file writes the same content-named file and records nothing.
  const fetched = await transport.download(incoming.file.fileId, incoming.maxBytes);
  if (!fetched.ok) {
    if (fetched.reason === 'failed') throw new Error(`The file could not be fetched: ${fetched.detail}`);
    if (await store.claimUpdate(deps.db, incoming.updateId, deps.clock.now()))
      await transport.sendText(incoming.chatId, tooLarge);
    return;
  }
  const { sha256 } = await deps.files.put(chat.space_id, chat.contact_id, fetched.bytes);
  await recordFile(deps, incoming, { sha256, size: fetched.bytes.length, bytes: fetched.bytes });
}

async function recordFile(
  deps: ChatDeps,
  incoming: Incoming & { messageId: number; file: IncomingFile },
  kept: { sha256: string; size: number; bytes: Uint8Array },
) {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (tx) => {
    if (!(await store.claimUpdate(tx, incoming.updateId, now))) return;
    const chat = await store.lockLiveChatOfGroup(tx, incoming.chatId);
    if (!chat) return;
    await store.insertMessage(tx, {
      id: randomUUID(),
      space_id: chat.space_id,
      contact_id: chat.contact_id,
      chat_id: chat.id,
      direction: 'in',
      kind: 'file',
      author: clipText(incoming.author, 200),
      telegram_message_id: String(incoming.messageId),
      file_name: incoming.file.name,
      file_size: kept.size,
      content_type: sniffContentType(kept.bytes),
      file_sha256: kept.sha256,
      created_at: now,
    });
    if (chat.key_id === null) return;
    await enqueueEvent(tx, {
      channel: 'key',
      spaceId: chat.space_id,
      keyId: chat.key_id,
      event: 'client.file',
      at: now,
      data: { contact_id: chat.contact_id, client: await clientOf(tx, chat), name: incoming.file.name },
    });
  });
}

const BUTTON_REPLIES = {
  notConnected: 'This group is not connected to a seller any more.',
  unknown: 'This invoice is not one of this group’s.',
  closed: 'This invoice is already settled or void.',
} as const;

/** "I paid" or "Need more time" under an invoice posted in the group. */
export async function pressButton(
  deps: ChatDeps,
  incoming: Incoming & { callbackQueryId: string; data: string },
): Promise<void> {
  const transport = requireBot(deps);
  const press = parseButtonData(incoming.data);
  const now = deps.clock.now();
  const outcome = await deps.db.transaction().execute(async (tx) => {
    if (!(await store.claimUpdate(tx, incoming.updateId, now))) return null;
    const chat = await store.lockLiveChatOfGroup(tx, incoming.chatId);
    if (!chat) return { answer: BUTTON_REPLIES.notConnected };
    if (!press) return { answer: BUTTON_REPLIES.unknown };
    const base = {
      spaceId: chat.space_id,
      contactId: chat.contact_id,
      clientName: await clientOf(tx, chat),
      invoiceId: press.invoiceId,
      keyId: chat.key_id,
      at: now,
    };
    const todayText = today(deps.clock);
    const result =
      press.kind === 'paid'
        ? await markPaidByPayer(tx, base)
        : await requestDeferral(tx, {
            ...base,
            days: press.days,
            propose: (dueOn) => proposedDueDate(dueOn, todayText, press.days),
          });
    if (!result.ok) return { answer: BUTTON_REPLIES[result.reason === 'closed' ? 'closed' : 'unknown'] };
    const { name } = await spaceNameAndPlan(tx, chat.space_id);
    const said =
      press.kind === 'paid'
        ? `Thank you. ${name} will confirm the payment of invoice ${result.row.number}.`
        : `${name} will look at your request to pay invoice ${result.row.number} by ${result.row.promised_on}.`;
    return { answer: said, post: said };
  });
  if (outcome === null) return;
  await transport.answerButton(incoming.callbackQueryId, outcome.answer);
  if ('post' in outcome && outcome.post) await transport.sendText(incoming.chatId, outcome.post);
}

/** The seller answers the client from the app; the bot posts it in the seller's name. */
export async function answerClient(
  deps: ChatDeps,
  userId: string,
  spaceId: string,
  contactId: string,
  text: string,
) {
  const transport = requireBot(deps);
  await requireRole(deps.db, spaceId, userId, WRITER_ROLES);
  await requireContact(deps.db, spaceId, contactId);
  const chat = await store.liveChatOfContact(deps.db, spaceId, contactId);
  if (!chat)
    throw new AppError('delivery_unavailable', 'This contact has no connected chat group.', {
      via: 'chat',
      reason: 'not_connected',
    });
  const space = await requireChatPlan(deps.db, spaceId, 'Posting to a chat group');
  const sent = await transport.sendText(chat.telegram_chat_id, clipText(`${space.name}: ${text}`));
  const row = await store.insertMessage(deps.db, {
    id: randomUUID(),
    space_id: spaceId,
    contact_id: contactId,
    chat_id: chat.id,
    direction: 'out',
    kind: 'text',
    text,
    author_user_id: userId,
    telegram_message_id: String(sent.messageId),
    created_at: deps.clock.now(),
  });
  return presentMessage(row);
}

export function presentMessage(row: store.MessageRow) {
  return {
    id: row.id,
    direction: row.direction,
    kind: row.kind,
    text: row.text,
    author: row.author,
    file:
      row.kind === 'file'
        ? { name: row.file_name ?? '', size: row.file_size ?? 0, content_type: row.content_type ?? '' }
        : null,
    created_at: row.created_at.toISOString(),
  };
}

const SCREEN_MESSAGES_MAX = 100;

/** One contact's chat for the app: the group, the newest messages and files, pending answers. */
export async function contactChat(deps: ChatDeps, userId: string, spaceId: string, contactId: string) {
  await requireRole(deps.db, spaceId, userId);
  await requireContact(deps.db, spaceId, contactId);
  const [chat, messages, pending, space, contact] = await Promise.all([
    store.liveChatOfContact(deps.db, spaceId, contactId),
    store.listMessages(deps.db, spaceId, contactId, SCREEN_MESSAGES_MAX),
    pendingChatAnswers(deps.db, spaceId, contactId),
    spaceNameAndPlan(deps.db, spaceId),
    findContactPayee(deps.db, spaceId, contactId),
  ]);
  return {
    contact_id: contactId,
    contact_name: contact?.name ?? '',
    bot_enabled: deps.transport !== undefined,
    can_post: planIncludesChat(space.plan),
    ...presentState(chat),
    messages: messages.map(presentMessage),
    pending,
  };
}

/** The space's contacts with a connected group. */
export async function listChats(deps: ChatDeps, userId: string, spaceId: string) {
  await requireRole(deps.db, spaceId, userId);
  const rows = await store.listLiveChats(deps.db, spaceId);
  return rows.map((row) => ({
    contact_id: row.contact_id,
    contact_name: row.contact_name,
    title: row.title,
    connected_at: row.connected_at.toISOString(),
  }));
}

/** A file the client dropped, for a member of the space. */
export async function readFile(
  deps: ChatDeps,
  userId: string,
  spaceId: string,
  contactId: string,
  id: string,
) {
  await requireRole(deps.db, spaceId, userId);
  const row = await store.findFileMessage(deps.db, spaceId, contactId, id);
  if (!row?.file_sha256) throw new AppError('not_found', 'No such file for this contact.');
  const bytes = await deps.files.get(spaceId, contactId, row.file_sha256);
  return {
    name: row.file_name ?? 'file',
    contentType: row.content_type ?? 'application/octet-stream',
    bytes,
  };
}

/** The invoices feature's delivery port: invoices posted to the contact's group with buttons. */
export function invoiceChatPort(deps: ChatDeps): InvoiceChatPort {
  return {
    async canPost(db, spaceId, contactId) {
      if (!deps.transport || contactId === null) return false;
      if (!(await store.liveChatOfContact(db, spaceId, contactId))) return false;
      return planIncludesChat((await spaceNameAndPlan(db, spaceId)).plan);
    },
    checkPost: async (db, spaceId, contactId) => {
      requireBot(deps);
      await postableChat(db, spaceId, contactId);
    },
    postInvoice: (post) => postInvoice(deps, post),
  };
}

/** The contact's live group and the space, when the space may post there now; else an AppError. */
async function postableChat(db: Queryable, spaceId: string, contactId: string | null) {
  const chat = contactId === null ? undefined : await store.liveChatOfContact(db, spaceId, contactId);
  if (!chat)
    throw new AppError('delivery_unavailable', 'The invoice’s contact has no connected chat group.', {
      via: 'chat',
      reason: 'not_connected',
    });
  const space = await requireChatPlan(db, spaceId, 'Posting to a chat group');
  return { chat, space };
}

/** Posts after commit: the group and the plan are checked again, as they are when it is made. */
async function postInvoice(deps: ChatDeps, post: ChatInvoicePost) {
  const transport = requireBot(deps);
  const { chat, space } = await postableChat(deps.db, post.spaceId, post.contactId);
  const sellerName = post.sellerName === '' ? space.name : post.sellerName;
  if (post.message !== '')
    await transport.sendText(chat.telegram_chat_id, clipText(`${sellerName}: ${post.message}`));
  const buttons = [
    [{ text: 'I paid', data: buttonData({ kind: 'paid', invoiceId: post.invoiceId }) }],
    DEFERRAL_DAYS.map((days) => ({
      text: `Need more time: ${days} days`,
      data: buttonData({ kind: 'defer', invoiceId: post.invoiceId, days }),
    })),
  ];
  await transport.sendDocument(
    chat.telegram_chat_id,
    { bytes: post.pdf, name: post.fileName },
    invoiceCaption({ ...post, sellerName }),
    buttons,
  );
}

/** Housekeeping: claims of updates older than a week and lapsed codes are dropped. */
export async function pruneChatRecords(deps: { db: Db; clock: Clock }): Promise<void> {
  const weekAgo = new Date(deps.clock.now().getTime() - 7 * 24 * 60 * 60 * 1000);
  await store.pruneUpdates(deps.db, weekAgo);
  await store.pruneLinkCodes(deps.db, weekAgo);
}

/**
 * The seller's decision in the app: confirm "I paid" (records the open amount as a payment),
 * reject it (clears the mark), accept "Need more time" (the due date moves) or decline it.
 */
export function decideAnswer(
  deps: ChatDeps,
  userId: string,
  spaceId: string,
  invoiceId: string,
  decision: ChatAnswerDecision,
) {
  const invoices = { db: deps.db, clock: deps.clock, publicUrl: deps.publicUrl };
  return deps.db
    .transaction()
    .execute((tx) => settleChatAnswer(tx, invoices, userId, spaceId, invoiceId, decision));
}
