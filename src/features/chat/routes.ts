import type { FastifyInstance } from 'fastify';
import type { Update } from 'grammy/types';
import { AppError } from '../../core/errors.ts';
import { constantTimeEqual } from '../../platform/crypto.ts';
import {
  APP_READ_ERRORS,
  APP_WRITE_ERRORS,
  INTEGRATION_READ_ERRORS,
  routeDoc,
  UPSTREAM_ERRORS,
} from '../../platform/http/openapi.ts';
import { Type } from '../../platform/http/schema-kit.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
import { InvoiceOut } from '../invoices/index.ts';
import type { ChatBot } from './bot.ts';
import {
  AnswerIn,
  ChatLinkOut,
  ChatListOut,
  ChatMessageOut,
  ChatStateOut,
  ContactChatOut,
  ContactParams,
  FileParams,
  SpaceContactParams,
  SpaceInvoiceParams,
  TelegramParams,
  TelegramUpdateChecked,
} from './schemas.ts';
import * as service from './service.ts';

/**
 * Telegram's webhook body: the schema checks only update_id, and the rest passes through to
 * grammY, which reads the whole body as its `Update`; the route's type says so.
 */
const TelegramUpdate = Type.Unsafe<Update>(TelegramUpdateChecked);

const CHAT = ['Chat'];
const UNAVAILABLE = [503] as const;

const docs = {
  createTelegramLink: routeDoc({
    operationId: 'createTelegramLink',
    summary: 'Mint a code that connects a client’s chat group',
    description:
      'Answers 201 with a single-use code (valid 24 hours), the bot’s username and the command to post: the operator adds the bot to the client’s group and posts `/link <code>` there. The group is then connected to the contact (a later group replaces it). Needs the chats scope and the Pro plan or higher (403 plan_required); 503 chat_unavailable when the server runs no bot. What the client then says arrives as webhook events (client.question, client.file, invoice.claimed_paid, invoice.deferral_requested) at this key’s address.',
    tags: CHAT,
    errors: [...INTEGRATION_READ_ERRORS, ...UNAVAILABLE],
  }),
  getContactChats: routeDoc({
    operationId: 'getContactChats',
    summary: 'Whether the contact’s chat group is connected',
    description:
      'Answers connected, the group’s title and when it was connected (null when no group is). Needs the chats scope; 503 chat_unavailable when the server runs no bot.',
    tags: CHAT,
    errors: [...INTEGRATION_READ_ERRORS, ...UNAVAILABLE],
  }),
  telegramWebhook: routeDoc({
    operationId: 'receiveTelegramUpdate',
    summary: 'Telegram’s webhook (for Telegram only)',
    description:
      'Where Telegram posts the bot’s updates when PUBLIC_URL is https; the path segment is a secret derived from the bot token and the X-Telegram-Bot-Api-Secret-Token header must match (401 otherwise). Each update is handled once across all server processes (claimed by update_id).',
    tags: CHAT,
    errors: [401, 404, 413, 415, 422],
  }),
  listChats: routeDoc({
    operationId: 'listChats',
    summary: 'List the contacts with a connected chat group',
    description: 'Any member of the space reads the list.',
    tags: CHAT,
    errors: APP_READ_ERRORS,
  }),
  getContactChat: routeDoc({
    operationId: 'getContactChat',
    summary: 'One contact’s chat: group, messages, files and pending answers',
    description:
      'The group’s state, the newest 100 messages and files both ways, and the invoices waiting on the seller: marked paid by the client, or with more time asked. Any member reads it.',
    tags: CHAT,
    errors: APP_READ_ERRORS,
  }),
  answerChat: routeDoc({
    operationId: 'answerChat',
    summary: 'Answer the client in their chat group',
    description:
      'The bot posts the text in the group in the space’s name. Owners, admins and members; 422 delivery_unavailable when no group is connected, 403 plan_required below Pro (a downgraded space’s group is read-only), 503 chat_unavailable without a bot, 502 when Telegram refuses.',
    tags: CHAT,
    errors: [...APP_WRITE_ERRORS, ...UPSTREAM_ERRORS, ...UNAVAILABLE],
  }),
  getChatFile: routeDoc({
    operationId: 'getChatFile',
    summary: 'Download a file the client dropped in chat',
    description: 'The bytes with the content type sniffed when the file arrived. Any member.',
    tags: CHAT,
    errors: APP_READ_ERRORS,
  }),
};

/** /integration: the link code and the connection state (scope chats). */
export function registerChatRoutes(server: FastifyInstance, deps: service.ChatDeps) {
  const app = typedRoutes(server);
  app.post(
    '/integration/contacts/:id/telegram-link',
    {
      config: { scope: 'chats' },
      schema: { ...docs.createTelegramLink, params: ContactParams, response: { 201: ChatLinkOut } },
    },
    async (request, reply) => {
      const { id } = request.params;
      return reply
        .code(201)
        .send(await service.createLinkCode(deps, requireCaller(request, 'integration'), id));
    },
  );
  app.get(
    '/integration/contacts/:id/chats',
    {
      config: { scope: 'chats' },
      schema: { ...docs.getContactChats, params: ContactParams, response: { 200: ChatStateOut } },
    },
    async (request) => {
      const { id } = request.params;
      return service.chatState(deps, requireCaller(request, 'integration').spaceId, id);
    },
  );
}

/** Telegram's webhook: registered only when the bot runs in webhook mode (PUBLIC_URL https). */
export function registerTelegramWebhook(server: FastifyInstance, bot: ChatBot) {
  const webhook = bot.webhook;
  if (!webhook) return;
  const secret = webhook.path.slice('/telegram/'.length);
  const app = typedRoutes(server);
  app.post(
    '/telegram/:secret',
    { schema: { ...docs.telegramWebhook, params: TelegramParams, body: TelegramUpdate } },
    async (request, reply) => {
      const given = request.params.secret;
      if (!constantTimeEqual(given, secret)) throw new AppError('not_found', 'No route here.');
      const header = request.headers['x-telegram-bot-api-secret-token'];
      if (typeof header !== 'string' || !constantTimeEqual(header, webhook.secretToken))
        throw new AppError('unauthorized', 'The secret token header does not match.');
      await bot.handle(request.body);
      return reply.code(200).send({ ok: true });
    },
  );
}

const DECISION_ROUTES = [
  {
    decision: 'confirm',
    path: 'payer-claim/confirm',
    summary: 'Confirm the client’s “I paid”: record the payment',
  },
  { decision: 'reject', path: 'payer-claim/reject', summary: 'Reject the client’s “I paid”: clear the mark' },
  {
    decision: 'accept',
    path: 'deferral/accept',
    summary: 'Accept the client’s request for more time: move the due date',
  },
  { decision: 'decline', path: 'deferral/decline', summary: 'Decline the client’s request for more time' },
] as const;

/** /app/api: the Chats screen's reads and writes, for scripts with a session. */
export function registerChatAppRoutes(server: FastifyInstance, deps: service.ChatDeps) {
  const app = typedRoutes(server);
  app.get(
    '/app/api/spaces/:id/chats',
    { schema: { ...docs.listChats, params: ContactParams, response: { 200: ChatListOut } } },
    async (request) => {
      const { id } = request.params;
      return { items: await service.listChats(deps, requireCaller(request).userId, id) };
    },
  );
  app.get(
    '/app/api/spaces/:id/contacts/:contact_id/chat',
    { schema: { ...docs.getContactChat, params: SpaceContactParams, response: { 200: ContactChatOut } } },
    async (request) => {
      const { id, contact_id } = request.params;
      return service.contactChat(deps, requireCaller(request).userId, id, contact_id);
    },
  );
  app.post(
    '/app/api/spaces/:id/contacts/:contact_id/chat/messages',
    {
      schema: {
        ...docs.answerChat,
        params: SpaceContactParams,
        body: AnswerIn,
        response: { 201: ChatMessageOut },
      },
    },
    async (request, reply) => {
      const { id, contact_id } = request.params;
      const { text } = request.body;
      return reply
        .code(201)
        .send(await service.answerClient(deps, requireCaller(request).userId, id, contact_id, text));
    },
  );
  app.get(
    '/app/api/spaces/:id/contacts/:contact_id/chat/files/:file_id',
    { schema: { ...docs.getChatFile, params: FileParams } },
    async (request, reply) => {
      const { id, contact_id, file_id } = request.params;
      const file = await service.readFile(deps, requireCaller(request).userId, id, contact_id, file_id);
      return sendFile(reply, file);
    },
  );
  for (const route of DECISION_ROUTES) {
    app.post(
      `/app/api/spaces/:id/invoices/:invoice_id/${route.path}`,
      {
        schema: {
          ...routeDoc({
            operationId: `${route.decision}ChatAnswer`,
            summary: route.summary,
            description:
              'The seller’s decision on what the client said with the buttons under an invoice posted in chat. Owners, admins and members; 422 invoice_state when nothing of that kind is pending. Answers the invoice.',
            tags: CHAT,
            errors: APP_WRITE_ERRORS,
          }),
          params: SpaceInvoiceParams,
          body: Type.Optional(Type.Object({})),
          response: { 200: InvoiceOut },
        },
      },
      async (request) => {
        const { id, invoice_id } = request.params;
        return service.decideAnswer(deps, requireCaller(request).userId, id, invoice_id, route.decision);
      },
    );
  }
}

/** A stored file as a download: never rendered inline, never sniffed again by the browser. */
export function sendFile(
  reply: import('fastify').FastifyReply,
  file: { name: string; contentType: string; bytes: Buffer },
) {
  const ascii = file.name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return reply
    .type(file.contentType)
    .header('x-content-type-options', 'nosniff')
    .header(
      'content-disposition',
      `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(file.name)}`,
    )
    .send(file.bytes);
}
