import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.ts';
import { BOT_TOKEN, type BotApiServer, startBotApiServer } from './support/bot-api-server.ts';

// One update delivered twice at once to two server processes on one database is handled once.
// With DATABASE_URL the second server is a real `tollbook serve` process on that PostgreSQL;
// on PGlite (one in-memory database per test process) it is a second app in this process.

const postgres = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== '';
const PUBLIC_URL = 'https://tollbook.test';

let bot: BotApiServer;
let first: Harness;
let second: Harness | undefined;
let child: ChildProcess | undefined;
const origins: string[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function startServerProcess(): Promise<string> {
  const port = await freePort();
  child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL,
      TELEGRAM_BOT_TOKEN: BOT_TOKEN,
      TELEGRAM_API_ROOT: bot.root,
      RUN_WORKERS: '0',
      DEMO: '0',
      CHAIN: '0',
      LOG_LEVEL: 'silent',
      MASTER_KEY: randomBytes(32).toString('hex'),
      DATA_DIR: mkdtempSync(join(tmpdir(), 'tollbook-chat-')),
    },
    stdio: 'ignore',
  });
  const origin = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 240; attempt++) {
    try {
      if ((await fetch(`${origin}/livez`)).ok) return origin;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('the second server did not start');
}

const env = () => ({
  TELEGRAM_BOT_TOKEN: BOT_TOKEN,
  TELEGRAM_API_ROOT: bot.root,
  PUBLIC_URL,
  WEBHOOK_ALLOW_PRIVATE: '1',
});

beforeAll(async () => {
  bot = await startBotApiServer();
  first = await createHarness({ env: env() });
  await first.app.listen({ port: 0, host: '127.0.0.1' });
  origins.push(`http://127.0.0.1:${(first.app.server.address() as AddressInfo).port}`);
  await first.deps.chat.bot!.setWebhook();
  if (postgres) origins.push(await startServerProcess());
  else {
    second = await createHarness({ env: env() });
    await second.app.listen({ port: 0, host: '127.0.0.1' });
    origins.push(`http://127.0.0.1:${(second.app.server.address() as AddressInfo).port}`);
  }
}, 120_000);

afterAll(async () => {
  child?.kill('SIGTERM');
  await second?.close();
  await first.close();
  await bot.close();
});

describe('an update delivered twice', () => {
  it('is handled once across two server processes: one message, one client.question, one /link answer', async () => {
    const { owner, spaceId, key } = await first.world({
      scopes: ['contacts', 'chats'],
      webhook_url: 'https://hooks.example.com/x',
    });
    const contact = await first.inject({
      method: 'POST',
      url: '/integration/contacts',
      key: key.key,
      payload: { name: 'Replay Ltd', kind: 'company' },
    });
    const contactId = contact.json().id as string;
    const code = (
      await first.inject({
        method: 'POST',
        url: `/integration/contacts/${contactId}/telegram-link`,
        key: key.key,
      })
    ).json().code;
    const chatId = -2_000_000_000 - Math.floor(Math.random() * 1_000_000);
    const link = bot.text(chatId, 'Replay group', `/link ${code}`);
    const linked = await Promise.all(origins.map((origin) => bot.deliver(link, origin)));
    expect(linked.map((a) => a.status)).toEqual([200, 200]);
    const answers = bot.callsOf('sendMessage').filter((c) => String(c.params.chat_id) === String(chatId));
    expect(answers).toHaveLength(1);
    expect(answers[0]!.params.text).toContain('this group is now connected');

    const question = bot.text(chatId, 'Replay group', 'Only once, please');
    // The same update, at the same moment, to both processes, three times over.
    const deliveries = await Promise.all(
      [...origins, ...origins, ...origins].map((origin) => bot.deliver(question, origin)),
    );
    expect(deliveries.every((d) => d.status === 200)).toBe(true);
    const chat = (
      await first.inject({
        method: 'GET',
        url: `/app/api/spaces/${spaceId}/contacts/${contactId}/chat`,
        session: owner.token,
      })
    ).json();
    expect(chat.messages.map((m: { text: string }) => m.text)).toEqual(['Only once, please']);
    const events = await first.db
      .selectFrom('outbox_events')
      .select('id')
      .where('space_id', '=', spaceId)
      .where('event', '=', 'client.question')
      .execute();
    expect(events).toHaveLength(1);
  }, 60_000);
});
