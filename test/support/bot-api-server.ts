import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A Bot API-shaped HTTP server for the chat tests: it speaks the methods Tollbook's bot uses
// (getMe, sendMessage, sendDocument, getFile and the file download, answerCallbackQuery,
// setWebhook, deleteWebhook, getUpdates), records every call with its parameters (and the
// bytes of uploaded documents), and posts updates to the registered webhook the way Telegram
// does: a JSON POST carrying X-Telegram-Bot-Api-Secret-Token.

export const BOT_TOKEN = '123456789:AAH-test-token-for-tollbook-chat-tests';
export const BOT_USERNAME = 'tollbook_test_bot';

export type BotCall = {
  method: string;
  params: Record<string, unknown>;
  /** Uploaded files by their form field name. */
  files: Record<string, { name: string; bytes: Buffer; type: string }>;
};

type StoredFile = { bytes: Buffer; path: string; uniqueId: string; declaredSize?: number | undefined };

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function parseValue(value: string): unknown {
  try {
    return value.startsWith('{') || value.startsWith('[') ? JSON.parse(value) : value;
  } catch {
    return value;
  }
}

/** JSON, urlencoded or multipart bodies, as the Bot API accepts them. */
async function parseParams(req: IncomingMessage, body: Buffer) {
  const type = String(req.headers['content-type'] ?? '');
  const params: Record<string, unknown> = {};
  const files: BotCall['files'] = {};
  if (body.length === 0) return { params, files };
  if (type.startsWith('application/json')) return { params: JSON.parse(body.toString('utf8')), files };
  const boundary = /boundary=("?)([^";]+)\1/.exec(type)?.[2];
  if (type.startsWith('application/x-www-form-urlencoded')) {
    for (const [name, value] of new URLSearchParams(body.toString('utf8'))) params[name] = parseValue(value);
    return { params, files };
  }
  if (!type.startsWith('multipart/form-data') || !boundary) throw new Error(`Unexpected body type ${type}`);
  // A small multipart reader: the Bot API (and grammY) write header names in any case, without
  // spaces, and the filename unquoted, which stricter parsers refuse.
  const delimiter = Buffer.from(`--${boundary}`);
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next === -1) break;
    const part = body.subarray(start + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, split).toString('utf8');
    const content = part.subarray(split + 4);
    const name = /name="?([^";\r\n]+)"?/i.exec(head)?.[1] ?? '';
    const filename = /filename="?([^";\r\n]+)"?/i.exec(head)?.[1];
    if (filename === undefined) params[name] = parseValue(content.toString('utf8'));
    else {
      const partType = /content-type:\s*([^\r\n]+)/i.exec(head)?.[1] ?? '';
      files[name] = { name: filename, bytes: Buffer.from(content), type: partType };
    }
    at = next;
  }
  return { params, files };
}

function send(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export type BotApiServer = Awaited<ReturnType<typeof startBotApiServer>>;

export async function startBotApiServer(options: { token?: string } = {}) {
  const token = options.token ?? BOT_TOKEN;
  const calls: BotCall[] = [];
  const files = new Map<string, StoredFile>();
  const queued: Record<string, unknown>[] = [];
  let webhook: { url: string; secret: string } | undefined;
  /** Methods answered with an error, as Telegram does when it refuses or is in trouble. */
  const failing = new Map<string, { status: number; description: string }>();
  let nextMessageId = 1000;
  let nextUpdateId = Math.floor(Math.random() * 1_000_000_000) + 1_000_000;

  const methods: Record<string, (call: BotCall) => unknown> = {
    getMe: () => ({
      id: Number(token.split(':')[0]),
      is_bot: true,
      first_name: 'Tollbook',
      username: BOT_USERNAME,
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
    }),
    sendMessage: (call) => ({
      message_id: nextMessageId++,
      date: Math.floor(Date.now() / 1000),
      chat: { id: call.params.chat_id, type: 'group' },
      text: call.params.text,
    }),
    sendDocument: (call) => ({
      message_id: nextMessageId++,
      date: Math.floor(Date.now() / 1000),
      chat: { id: call.params.chat_id, type: 'group' },
      caption: call.params.caption,
    }),
    answerCallbackQuery: () => true,
    setWebhook: (call) => {
      webhook = { url: String(call.params.url), secret: String(call.params.secret_token ?? '') };
      return true;
    },
    deleteWebhook: () => {
      webhook = undefined;
      return true;
    },
    getFile: (call) => {
      const id = String(call.params.file_id);
      const file = files.get(id);
      if (!file) return undefined;
      return {
        file_id: id,
        file_unique_id: file.uniqueId,
        file_size: file.declaredSize ?? file.bytes.length,
        file_path: file.path,
      };
    },
  };

  const server = createServer((req, res) => {
    answer(req, res).catch((error: unknown) =>
      send(res, 500, { ok: false, error_code: 500, description: String(error) }),
    );
  });

  async function answer(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://bot.local');
    const fileMatch = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && fileMatch) {
      const file = [...files.values()].find((f) => f.path === fileMatch[2]);
      if (fileMatch[1] !== token || !file)
        return send(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': String(file.bytes.length),
      });
      return res.end(file.bytes);
    }
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(url.pathname);
    if (!match) return send(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    if (match[1] !== token)
      return send(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
    const method = match[2]!;
    const { params, files: uploaded } = await parseParams(req, await readBody(req));
    const call: BotCall = { method, params, files: uploaded };
    calls.push(call);
    if (method === 'getUpdates') return answerUpdates(res, params);
    const failure = failing.get(method);
    if (failure)
      return send(res, failure.status, {
        ok: false,
        error_code: failure.status,
        description: failure.description,
      });
    const handler = methods[method];
    if (!handler)
      return send(res, 404, { ok: false, error_code: 404, description: 'Not Found: method not found' });
    const result = handler(call);
    if (result === undefined)
      return send(res, 400, { ok: false, error_code: 400, description: 'Bad Request: invalid file_id' });
    return send(res, 200, { ok: true, result });
  }

  function answerUpdates(res: ServerResponse, params: Record<string, unknown>) {
    const offset = Number(params.offset ?? 0);
    // Confirmed updates (below the offset) are forgotten, as Telegram does.
    while (queued.length > 0 && Number(queued[0]!.update_id) < offset) queued.shift();
    return send(res, 200, { ok: true, result: queued.filter((u) => Number(u.update_id) >= offset) });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const chat = (id: number, title: string) => ({
    id,
    type: 'group',
    title,
    all_members_are_administrators: true,
  });
  const person = { id: 555001, is_bot: false, first_name: 'Dana', last_name: 'Client' };
  const message = (chatId: number, title: string, extra: Record<string, unknown>) => ({
    message_id: nextMessageId++,
    date: Math.floor(Date.now() / 1000),
    chat: chat(chatId, title),
    from: person,
    ...extra,
  });

  return {
    root,
    calls,
    callsOf: (method: string) => calls.filter((c) => c.method === method),
    /** Answers `method` with this error until `heal(method)`; the calls are still recorded. */
    fail: (method: string, status: number, description: string) => {
      failing.set(method, { status, description });
    },
    heal: (method: string) => {
      failing.delete(method);
    },
    webhook: () => webhook,
    /** Registers a file the bot can fetch; answers its file_id. */
    addFile(bytes: Buffer, path: string, declaredSize?: number): string {
      const id = `file-${files.size + 1}-${Math.random().toString(36).slice(2)}`;
      files.set(id, { bytes, path, uniqueId: `u${files.size + 1}`, declaredSize });
      return id;
    },
    update(body: Record<string, unknown>): Record<string, unknown> {
      return { update_id: nextUpdateId++, ...body };
    },
    text(chatId: number, title: string, text: string) {
      return this.update({ message: message(chatId, title, { text }) });
    },
    document(chatId: number, title: string, fileId: string, name: string, size: number) {
      return this.update({
        message: message(chatId, title, {
          document: { file_id: fileId, file_unique_id: `d-${fileId}`, file_name: name, file_size: size },
        }),
      });
    },
    photo(chatId: number, title: string, fileId: string, size: number) {
      return this.update({
        message: message(chatId, title, {
          photo: [
            { file_id: `${fileId}-small`, file_unique_id: 's', width: 90, height: 90, file_size: 100 },
            { file_id: fileId, file_unique_id: `p-${fileId}`, width: 800, height: 600, file_size: size },
          ],
        }),
      });
    },
    press(chatId: number, title: string, data: string) {
      return this.update({
        callback_query: {
          id: `cq-${nextUpdateId}`,
          from: person,
          chat_instance: 'ci',
          data,
          message: message(chatId, title, { text: 'invoice' }),
        },
      });
    },
    removed(chatId: number, title: string) {
      const bot = {
        id: Number(token.split(':')[0]),
        is_bot: true,
        first_name: 'Tollbook',
        username: BOT_USERNAME,
      };
      return this.update({
        my_chat_member: {
          chat: chat(chatId, title),
          from: person,
          date: Math.floor(Date.now() / 1000),
          old_chat_member: { status: 'member', user: bot },
          new_chat_member: { status: 'kicked', user: bot, until_date: 0 },
        },
      });
    },
    /** Queues an update for getUpdates (long polling). */
    queue(update: Record<string, unknown>) {
      queued.push(update);
    },
    /**
     * Posts an update to the webhook as Telegram does. `origin` replaces the registered URL's
     * origin (the test server listens on loopback while PUBLIC_URL names an https host).
     */
    async deliver(update: Record<string, unknown>, origin: string, headers?: Record<string, string>) {
      if (!webhook) throw new Error('No webhook is set.');
      const target = new URL(webhook.url);
      const response = await fetch(`${origin}${target.pathname}`, {
        method: 'POST',
        headers: headers ?? {
          'content-type': 'application/json',
          'x-telegram-bot-api-secret-token': webhook.secret,
        },
        body: JSON.stringify(update),
      });
      return { status: response.status, body: await response.text() };
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
