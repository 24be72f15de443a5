import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import { invoiceChatPort } from '../src/features/chat/index.ts';
import { sendAutomaticReminders, sendInvoiceChatPosts } from '../src/features/invoices/index.ts';
import { createHarness, type Harness } from './harness.ts';
import { BOT_TOKEN, type BotApiServer, startBotApiServer } from './support/bot-api-server.ts';

// Long polling (PUBLIC_URL is not https: no webhook route, updates come from getUpdates), the
// automatic reminders by chat, concurrent use of one link code, and a server without a bot.

let bot: BotApiServer;
let h: Harness;
let bare: Harness;
const clock = new ManualClock(new Date('2026-06-01T09:00:00Z'));

beforeAll(async () => {
  bot = await startBotApiServer();
  h = await createHarness({
    clock,
    env: { TELEGRAM_BOT_TOKEN: BOT_TOKEN, TELEGRAM_API_ROOT: bot.root, PUBLIC_URL: 'http://localhost:8080' },
  });
  bare = await createHarness();
});

afterAll(async () => {
  await bare.close();
  await h.close();
  await bot.close();
});

const groupId = () => -3_000_000_000 - Math.floor(Math.random() * 1_000_000_000);

async function contactWithCode(harness: Harness) {
  const { owner, spaceId, key } = await harness.world({ scopes: ['contacts', 'chats', 'invoices'] });
  const contact = await harness.inject({
    method: 'POST',
    url: '/integration/contacts',
    key: key.key,
    payload: { name: 'Polling GmbH', kind: 'company' },
  });
  const contactId = contact.json().id as string;
  const res = await harness.inject({
    method: 'POST',
    url: `/integration/contacts/${contactId}/telegram-link`,
    key: key.key,
  });
  return { owner, spaceId, key, contactId, code: res.json()?.code as string, res };
}

describe('without a bot token', () => {
  it('answers 503 chat_unavailable on both chat routes, and the app says how to enable the bot', async () => {
    const { owner, spaceId, key, contactId, res } = await contactWithCode(bare);
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: 'chat_unavailable' });
    expect(res.json().detail).toContain('TELEGRAM_BOT_TOKEN');
    const state = await bare.inject({
      method: 'GET',
      url: `/integration/contacts/${contactId}/chats`,
      key: key.key,
    });
    expect(state.statusCode).toBe(503);
    const answer = await bare.inject({
      method: 'POST',
      url: `/app/api/spaces/${spaceId}/contacts/${contactId}/chat/messages`,
      session: owner.token,
      payload: { text: 'hello' },
    });
    expect(answer.statusCode).toBe(503);
    const screen = await bare.inject({
      method: 'GET',
      url: `/app/api/spaces/${spaceId}/contacts/${contactId}/chat`,
      session: owner.token,
    });
    expect(screen.json()).toMatchObject({ bot_enabled: false, connected: false });
  });

  it('has no webhook route', async () => {
    const res = await bare.inject({ method: 'POST', url: '/telegram/anything', payload: { update_id: 1 } });
    expect(res.statusCode).toBe(404);
  });
});

describe('long polling', () => {
  it('serves no webhook when PUBLIC_URL is http, and handles what getUpdates brings, once', async () => {
    expect(h.deps.chat.bot!.webhook).toBeUndefined();
    const { owner, spaceId, contactId, code } = await contactWithCode(h);
    const chatId = groupId();
    bot.queue(bot.text(chatId, 'Polled group', `/link ${code}`));
    const question = bot.text(chatId, 'Polled group', 'Polled question');
    bot.queue(question);
    expect(await h.deps.chat.bot!.pollOnce()).toBe(2);
    // Telegram hands the same update out again (a restart before the offset was confirmed).
    bot.queue(question);
    await h.deps.chat.bot!.pollOnce();
    const chat = (
      await h.inject({
        method: 'GET',
        url: `/app/api/spaces/${spaceId}/contacts/${contactId}/chat`,
        session: owner.token,
      })
    ).json();
    expect(chat).toMatchObject({ connected: true, title: 'Polled group' });
    expect(chat.messages.map((m: { text: string }) => m.text)).toEqual(['Polled question']);
    const polls = bot.callsOf('getUpdates');
    expect(polls.at(-1)!.params.allowed_updates).toEqual(['message', 'callback_query', 'my_chat_member']);
  });
});

describe('one link code posted in two groups at once', () => {
  it('connects exactly one of them', async () => {
    const { key, contactId, code } = await contactWithCode(h);
    const groups = [groupId(), groupId(), groupId()];
    await Promise.all(
      groups.map((chatId) =>
        h.deps.chat.bot!.handle(bot.text(chatId, `Group ${chatId}`, `/link ${code}`) as never),
      ),
    );
    const said = groups.map(
      (chatId) =>
        bot
          .callsOf('sendMessage')
          .filter((c) => String(c.params.chat_id) === String(chatId))
          .at(-1)!.params.text,
    );
    expect(said.filter((text) => String(text).includes('now connected'))).toHaveLength(1);
    expect(said.filter((text) => String(text).includes('already used'))).toHaveLength(2);
    const state = await h.inject({
      method: 'GET',
      url: `/integration/contacts/${contactId}/chats`,
      key: key.key,
    });
    expect(state.json().connected).toBe(true);
  });
});

describe('automatic reminders', () => {
  it('go by chat where the contact has a group, once per stage', async () => {
    const { spaceId, key, contactId, code } = await contactWithCode(h);
    const chatId = groupId();
    await h.deps.chat.bot!.handle(bot.text(chatId, 'Reminded group', `/link ${code}`) as never);
    const account = await h.makeAccount(spaceId);
    const created = await h.inject({
      method: 'POST',
      url: '/integration/invoices',
      key: key.key,
      payload: {
        account_id: account.id,
        contact_id: contactId,
        client_name: 'Polling GmbH',
        due_on: '2026-06-03',
        line_items: [
          { description: 'Work', unit_price: '2', quantity: '1', tax_kind: 'zero', tax_rate: '0' },
        ],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const invoice = created.json();
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/send`,
      key: key.key,
      payload: { via: 'none' },
    });
    const deps = {
      db: h.db,
      clock,
      publicUrl: 'http://localhost:8080',
      chat: invoiceChatPort(h.deps.chat.deps),
    };
    await sendAutomaticReminders(deps, 500);
    await sendAutomaticReminders(deps, 500);
    // Each stage is queued once; the chat worker posts it after commit, once.
    expect(await sendInvoiceChatPosts(deps, { spaceIds: [spaceId] })).toBe(1);
    expect(await sendInvoiceChatPosts(deps, { spaceIds: [spaceId] })).toBe(0);
    const posted = bot.callsOf('sendDocument').filter((c) => String(c.params.chat_id) === String(chatId));
    expect(posted).toHaveLength(1);
    expect(String(posted[0]!.params.caption)).toContain(`Reminder: invoice ${invoice.number}`);
    expect(String(posted[0]!.params.caption)).toContain('2.00 USD');
    const read = await h.inject({ method: 'GET', url: `/integration/invoices/${invoice.id}`, key: key.key });
    expect(read.json().delivered_in_app).toBe(true);
  });
});
