import { createHmac } from 'node:crypto';
import { Bot, type Context, GrammyError, InputFile } from 'grammy';
import type { Update } from 'grammy/types';
import { AppError } from '../../core/errors.ts';
import { refuseInsideTransaction } from '../../platform/db/transaction-guard.ts';
import { cleanFileName, FILE_BYTES_MAX, isCommand, parseLinkCommand } from './domain.ts';
import * as service from './service.ts';
import type { Button, ChatTransport, Download } from './transport.ts';

// The bot adapter: grammY speaks the Bot API (Telegram's, or TELEGRAM_API_ROOT's), and the
// handlers below turn updates into the service's use cases. Updates arrive by webhook when
// PUBLIC_URL is https (the route checks Telegram's secret-token header) and by long polling
// otherwise; either way every update is claimed by its update_id in the database first.

export type ChatBotSettings = { token: string; apiRoot: string; publicUrl: string };

/** The updates the bot asks Telegram for. */
const ALLOWED_UPDATES = ['message', 'callback_query', 'my_chat_member'] as const;
const DOWNLOAD_TIMEOUT_MS = 60_000;
const POLL_TIMEOUT_S = 10;
const CALL_TIMEOUT_S = 20;

export type ChatBot = {
  transport: ChatTransport;
  /** Where Telegram posts updates, when PUBLIC_URL is https; undefined means long polling. */
  webhook: { path: string; secretToken: string } | undefined;
  handle(update: Update): Promise<void>;
  setWebhook(): Promise<void>;
  /** One long poll: handles what arrived and answers how many updates that was. */
  pollOnce(signal?: AbortSignal): Promise<number>;
};

/** Both secrets derive from the token, so every server process agrees on them without storage. */
function derived(token: string, purpose: string): string {
  return createHmac('sha256', token).update(`tollbook telegram ${purpose}`).digest('hex');
}

/**
 * A failed Bot API call as a 502. `details.reason` tells the two ends apart: `refused` is
 * Telegram's definite no (a 4xx other than 429: the group is gone, the bot was removed);
 * `unknown` is everything else (unreachable, a timeout, 429 or 5xx), where the message may or
 * may not have been posted.
 */
function refusal(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const code = error instanceof GrammyError ? error.error_code : undefined;
  const refused = code !== undefined && code >= 400 && code < 500 && code !== 429;
  const detail =
    error instanceof GrammyError
      ? `Telegram refused: ${error.description}`
      : 'Telegram could not be reached.';
  return new AppError('delivery_failed', detail.slice(0, 300), {
    via: 'chat',
    reason: refused ? 'refused' : 'unknown',
  });
}

async function calling<T>(call: () => Promise<T>): Promise<T> {
  // Telegram is an outside call: never made while a transaction holds rows (posts go after commit).
  refuseInsideTransaction('the chat bot');
  try {
    return await call();
  } catch (error) {
    throw refusal(error);
  }
}

async function readCapped(response: Response, maxBytes: number): Promise<Download> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > maxBytes) return { ok: false, reason: 'too_large', detail: `${declared} bytes` };
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  if (!reader) return { ok: false, reason: 'failed', detail: 'empty answer' };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxBytes) {
      await reader.cancel();
      return { ok: false, reason: 'too_large', detail: `more than ${maxBytes} bytes` };
    }
    chunks.push(value);
  }
  return { ok: true, bytes: Buffer.concat(chunks), path: '' };
}

function transportOf(bot: Bot, settings: ChatBotSettings): ChatTransport {
  let ready: Promise<void> | undefined;
  const init = () => {
    ready ??= bot.init().catch((error: unknown) => {
      ready = undefined;
      throw refusal(error);
    });
    return ready;
  };
  const keyboard = (buttons: Button[][]) => ({
    inline_keyboard: buttons.map((row) => row.map((b) => ({ text: b.text, callback_data: b.data }))),
  });
  return {
    username: async () => {
      await init();
      return bot.botInfo.username;
    },
    sendText: (chatId, text) =>
      calling(async () => ({ messageId: (await bot.api.sendMessage(Number(chatId), text)).message_id })),
    sendDocument: (chatId, file, caption, buttons) =>
      calling(async () => {
        const sent = await bot.api.sendDocument(Number(chatId), new InputFile(file.bytes, file.name), {
          caption,
          reply_markup: keyboard(buttons),
        });
        return { messageId: sent.message_id };
      }),
    download: async (fileId, maxBytes) => {
      try {
        const file = await bot.api.getFile(fileId);
        if ((file.file_size ?? 0) > maxBytes)
          return { ok: false, reason: 'too_large', detail: `${file.file_size} bytes` };
        if (!file.file_path) return { ok: false, reason: 'failed', detail: 'no file_path' };
        const url = `${settings.apiRoot}/file/bot${settings.token}/${file.file_path}`;
        const response = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
        if (!response.ok) return { ok: false, reason: 'failed', detail: `status ${response.status}` };
        const read = await readCapped(response, maxBytes);
        return read.ok ? { ...read, path: file.file_path } : read;
      } catch (error) {
        return { ok: false, reason: 'failed', detail: refusal(error).message };
      }
    },
    answerButton: (callbackQueryId, text) =>
      calling(async () => {
        await bot.api.answerCallbackQuery(callbackQueryId, { text });
      }),
  };
}

function incomingOf(ctx: Context, updateId: number): service.Incoming {
  const chat = ctx.chat;
  const from = ctx.from;
  const author = from ? [from.first_name, from.last_name ?? ''].join(' ').trim() : '';
  return {
    updateId,
    chatId: String(chat?.id ?? ''),
    chatType: chat?.type ?? '',
    title: chat && 'title' in chat ? (chat.title ?? '') : '',
    author,
  };
}

function fileOf(ctx: Context): service.IncomingFile | undefined {
  const message = ctx.message;
  if (message?.document) {
    const doc = message.document;
    return {
      fileId: doc.file_id,
      fileSize: doc.file_size,
      name: cleanFileName(doc.file_name, `file-${doc.file_unique_id}`),
    };
  }
  const photo = message?.photo?.at(-1);
  if (photo)
    return { fileId: photo.file_id, fileSize: photo.file_size, name: `photo-${photo.file_unique_id}.jpg` };
  return undefined;
}

function installHandlers(bot: Bot, deps: service.ChatDeps) {
  bot.on('my_chat_member', async (ctx) => {
    const status = ctx.myChatMember.new_chat_member.status;
    if (status === 'left' || status === 'kicked')
      await service.groupLost(deps, { updateId: ctx.update.update_id, chatId: String(ctx.chat.id) });
  });
  bot.on('message:migrate_to_chat_id', async (ctx) => {
    await service.groupMoved(deps, {
      updateId: ctx.update.update_id,
      chatId: String(ctx.chat.id),
      toChatId: String(ctx.message.migrate_to_chat_id),
    });
  });
  bot.on('message:text', async (ctx) => {
    const incoming = incomingOf(ctx, ctx.update.update_id);
    const link = parseLinkCommand(ctx.message.text, bot.botInfo.username);
    if (link) return service.linkGroup(deps, { ...incoming, code: link.code });
    if (isCommand(ctx.message.text)) return;
    await service.receiveText(deps, {
      ...incoming,
      text: ctx.message.text,
      messageId: ctx.message.message_id,
    });
  });
  bot.on(['message:document', 'message:photo'], async (ctx) => {
    const file = fileOf(ctx);
    if (!file) return;
    await service.receiveFile(deps, {
      ...incomingOf(ctx, ctx.update.update_id),
      messageId: ctx.message.message_id,
      file,
      maxBytes: FILE_BYTES_MAX,
    });
  });
  bot.on('callback_query:data', async (ctx) => {
    await service.pressButton(deps, {
      ...incomingOf(ctx, ctx.update.update_id),
      callbackQueryId: ctx.callbackQuery.id,
      data: ctx.callbackQuery.data,
    });
  });
}

export function createChatBot(settings: ChatBotSettings, deps: Omit<service.ChatDeps, 'transport'>): ChatBot {
  // A call to Telegram may run inside a database transaction (an invoice sent by chat), so it
  // is given a short deadline rather than grammY's default of several minutes.
  const bot = new Bot(settings.token, {
    client: { apiRoot: settings.apiRoot, timeoutSeconds: CALL_TIMEOUT_S },
  });
  const transport = transportOf(bot, settings);
  installHandlers(bot, { ...deps, transport });
  const webhook = settings.publicUrl.startsWith('https://')
    ? {
        path: `/telegram/${derived(settings.token, 'webhook path').slice(0, 40)}`,
        secretToken: derived(settings.token, 'webhook secret'),
      }
    : undefined;
  let offset = 0;
  const handle = async (update: Update) => {
    await transport.username();
    await bot.handleUpdate(update);
  };
  return {
    transport,
    webhook,
    handle,
    setWebhook: async () => {
      if (!webhook) return;
      await calling(() =>
        bot.api.setWebhook(`${settings.publicUrl}${webhook.path}`, {
          secret_token: webhook.secretToken,
          allowed_updates: [...ALLOWED_UPDATES],
        }),
      );
    },
    pollOnce: async (signal) => {
      await transport.username();
      const updates = await bot.api.getUpdates(
        { offset, timeout: POLL_TIMEOUT_S, allowed_updates: [...ALLOWED_UPDATES] },
        // grammY types its signal with the abort-controller polyfill; Node's own is the same at run time.
        signal as never,
      );
      for (const update of updates) {
        // A failed update stops the batch: the next poll asks again from it.
        await handle(update);
        offset = update.update_id + 1;
      }
      return updates.length;
    },
  };
}

/** Long polling until stopped (PUBLIC_URL is not https): one poll at a time, a pause after a failure. */
export function startPolling(chatBot: ChatBot, onError: (error: unknown) => void): () => Promise<void> {
  const controller = new AbortController();
  const loop = (async () => {
    while (!controller.signal.aborted) {
      try {
        await chatBot.pollOnce(controller.signal);
      } catch (error) {
        if (controller.signal.aborted) break;
        onError(error);
        await new Promise((resolve) => setTimeout(resolve, 5_000).unref());
      }
    }
  })();
  return async () => {
    controller.abort();
    await loop;
  };
}
