import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../src/core/clock.ts';
import { invoiceChatPort } from '../src/features/chat/index.ts';
import { CHAT_POST_RETRY_DELAYS_MS, sendInvoiceChatPosts } from '../src/features/invoices/index.ts';
import { createSenders, type Senders, WebhookWorker } from '../src/features/webhooks/index.ts';
import { createHarness, type Harness, type Key, type User } from './harness.ts';
import { BOT_TOKEN, BOT_USERNAME, type BotApiServer, startBotApiServer } from './support/bot-api-server.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

// The chat feature against a Bot API-shaped server run by the test: the bot's calls are
// recorded there, and updates reach the app's webhook over real HTTP with Telegram's secret
// header. Key-channel events are delivered to a real receiver and checked with their signature.

let bot: BotApiServer;
let h: Harness;
let origin: string;
let receiver: Receiver;
let senders: Senders;

const PUBLIC_URL = 'https://tollbook.test';

beforeAll(async () => {
  bot = await startBotApiServer();
  h = await createHarness({
    env: {
      TELEGRAM_BOT_TOKEN: BOT_TOKEN,
      TELEGRAM_API_ROOT: bot.root,
      PUBLIC_URL,
      WEBHOOK_ALLOW_PRIVATE: '1',
    },
  });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  origin = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  await h.deps.chat.bot!.setWebhook();
  receiver = await startReceiver();
  senders = createSenders({ allowPrivate: true, resolver: h.deps.resolver, timeoutMs: 2_000 });
});

afterAll(async () => {
  await Promise.all([senders.key.close(), senders.subscription.close()]);
  await receiver.close();
  await h.close();
  await bot.close();
});

let nextChatId = -1_000_000_000 - Math.floor(Math.random() * 1_000_000);
const newGroupId = () => nextChatId--;

/** The bot's calls of one method to one group (multipart calls carry the chat id as text). */
const sentTo = (method: string, chatId: number) =>
  bot.callsOf(method).filter((c) => String(c.params.chat_id) === String(chatId));

type World = { owner: User; spaceId: string; key: Key; contactId: string };

async function world(plan = 'pro'): Promise<World> {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner, { name: 'Northwind Books', plan });
  const key = await h.issueKey(owner, spaceId, {
    scopes: ['invoices', 'contacts', 'chats'],
    webhook_url: receiver.url,
  });
  const contact = await h.inject({
    method: 'POST',
    url: '/integration/contacts',
    key: key.key,
    payload: { name: 'Acme GmbH', kind: 'company' },
  });
  expect(contact.statusCode).toBe(201);
  return { owner, spaceId, key, contactId: contact.json().id };
}

const mint = (w: World, contactId = w.contactId) =>
  h.inject({ method: 'POST', url: `/integration/contacts/${contactId}/telegram-link`, key: w.key.key });

const state = (w: World) =>
  h.inject({ method: 'GET', url: `/integration/contacts/${w.contactId}/chats`, key: w.key.key });

async function linked(w: World, title = 'Acme × Northwind') {
  const code = (await mint(w)).json().code as string;
  const chatId = newGroupId();
  const answer = await bot.deliver(bot.text(chatId, title, `/link ${code}`), origin);
  expect(answer.status).toBe(200);
  return { chatId, title, code };
}

/** One round of the chat worker for the space's queued invoice posts (made after commit). */
const postQueued = (w: World, clock: Clock = h.clock) =>
  sendInvoiceChatPosts(
    { db: h.db, clock, publicUrl: PUBLIC_URL, chat: invoiceChatPort(h.deps.chat.deps) },
    { spaceIds: [w.spaceId] },
  );

/** Delivers the space's key-channel events to the receiver and answers them, signature checked. */
async function deliveredEvents(w: World, event: string) {
  const worker = new WebhookWorker(
    { db: h.db, clock: h.clock, secrets: h.deps.secrets, senders },
    { spaceIds: [w.spaceId] },
  );
  await worker.drain();
  return receiver.arrivals
    .filter((a) => a.headers['x-service-event'] === event)
    .map((a) => {
      const expected = Buffer.from(
        `sha256=${createHmac('sha256', w.key.webhookSecret).update(a.body).digest('hex')}`,
      );
      const given = Buffer.from(String(a.headers['x-service-signature']));
      return {
        body: JSON.parse(a.body.toString('utf8')),
        signed: given.length === expected.length && timingSafeEqual(given, expected),
      };
    })
    .filter((e) => e.body.space_id === w.spaceId);
}

describe('link code (POST …/telegram-link) and GET …/chats', () => {
  it('answers 201 with a code, the bot username and the /link command', async () => {
    const w = await world();
    const res = await mint(w);
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.code).toMatch(/^[A-Z2-9]{12}$/);
    expect(body).toEqual({ code: body.code, bot_username: BOT_USERNAME, command: `/link ${body.code}` });
    expect((await state(w)).json()).toEqual({ connected: false, title: null, connected_at: null });
  });

  it('refuses a space on the free plan with 403 plan_required', async () => {
    const w = await world('free');
    const res = await mint(w);
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('plan_required');
  });

  it('needs the chats scope, and another space’s contact is 404', async () => {
    const w = await world();
    const noScope = await h.issueKey(w.owner, w.spaceId, { scopes: ['contacts'] });
    const res = await h.inject({
      method: 'POST',
      url: `/integration/contacts/${w.contactId}/telegram-link`,
      key: noScope.key,
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('missing_scope');
    const other = await world();
    expect((await mint(other, w.contactId)).statusCode).toBe(404);
  });

  it('connects the group on /link, answers in the seller’s name, and the code is single-use', async () => {
    const w = await world();
    const { chatId, code } = await linked(w);
    const said = sentTo('sendMessage', chatId);
    expect(said.at(-1)!.params.text).toContain('Northwind Books: this group is now connected');
    const now = (await state(w)).json();
    expect(now).toMatchObject({ connected: true, title: 'Acme × Northwind' });
    expect(Date.parse(now.connected_at)).toBeGreaterThan(Date.now() - 60_000);
    const again = newGroupId();
    await bot.deliver(bot.text(again, 'Elsewhere', `/link@${BOT_USERNAME} ${code}`), origin);
    const refused = sentTo('sendMessage', again);
    expect(refused.at(-1)!.params.text).toContain('unknown, already used or expired');
    expect((await state(w)).json().title).toBe('Acme × Northwind');
  });

  it('replaces the first group with a second one for the same contact', async () => {
    const w = await world();
    const first = await linked(w, 'First group');
    await linked(w, 'Second group');
    expect((await state(w)).json()).toMatchObject({ connected: true, title: 'Second group' });
    // The first group is no longer heard.
    await bot.deliver(bot.text(first.chatId, 'First group', 'still there?'), origin);
    const chat = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${w.spaceId}/contacts/${w.contactId}/chat`,
      session: w.owner.token,
    });
    expect(chat.json().messages).toEqual([]);
  });

  it('follows the group when Telegram upgrades it to a supergroup (a new chat id)', async () => {
    const w = await world();
    const { chatId, title } = await linked(w);
    const superId = chatId * 1000 - 7;
    const moved = bot.update({
      message: {
        message_id: 1,
        date: Math.floor(Date.now() / 1000),
        chat: { id: chatId, type: 'group', title },
        migrate_to_chat_id: superId,
      },
    });
    expect((await bot.deliver(moved, origin)).status).toBe(200);
    const fromSuper = bot.update({
      message: {
        message_id: 2,
        date: Math.floor(Date.now() / 1000),
        chat: { id: superId, type: 'supergroup', title },
        from: { id: 9, is_bot: false, first_name: 'Dana' },
        text: 'Now from the supergroup',
      },
    });
    await bot.deliver(fromSuper, origin);
    const chat = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${w.spaceId}/contacts/${w.contactId}/chat`,
      session: w.owner.token,
    });
    expect(chat.json().messages.map((m: { text: string }) => m.text)).toEqual(['Now from the supergroup']);
  });

  it('disconnects the group when the bot is removed from it', async () => {
    const w = await world();
    const { chatId, title } = await linked(w);
    expect((await bot.deliver(bot.removed(chatId, title), origin)).status).toBe(200);
    expect((await state(w)).json()).toEqual({ connected: false, title: null, connected_at: null });
  });
});

describe('the webhook', () => {
  it('refuses an update without the secret header (401), with a wrong one (401), at a wrong path (404)', async () => {
    const update = bot.text(newGroupId(), 'Forged', 'hello');
    const missing = await bot.deliver(update, origin, { 'content-type': 'application/json' });
    expect(missing.status).toBe(401);
    expect(JSON.parse(missing.body).error).toBe('unauthorized');
    const wrong = await bot.deliver(update, origin, {
      'content-type': 'application/json',
      'x-telegram-bot-api-secret-token': 'not-the-secret',
    });
    expect(wrong.status).toBe(401);
    const path = await fetch(`${origin}/telegram/guessed`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-telegram-bot-api-secret-token': bot.webhook()!.secret,
      },
      body: JSON.stringify(update),
    });
    expect(path.status).toBe(404);
  });

  it('registers an unguessable https address with Telegram, with a secret token', () => {
    const hook = bot.webhook()!;
    expect(hook.url).toMatch(/^https:\/\/tollbook\.test\/telegram\/[0-9a-f]{40}$/);
    expect(hook.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(hook.url).not.toContain(BOT_TOKEN);
  });

  it('answers 422 for a body that is not an update, and never 500', async () => {
    const hook = bot.webhook()!;
    const res = await fetch(`${origin}${new URL(hook.url).pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': hook.secret },
      body: JSON.stringify({ hello: 1 }),
    });
    expect(res.status).toBe(422);
  });
});

describe('from the client', () => {
  it('a text becomes client.question, kept as sent, signed on the key channel', async () => {
    const w = await world();
    const { chatId, title } = await linked(w);
    const text = 'Hello! Can you resend invoice #42? 🙏\nThanks';
    expect((await bot.deliver(bot.text(chatId, title, text), origin)).status).toBe(200);
    const events = await deliveredEvents(w, 'client.question');
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event!.signed).toBe(true);
    expect(Object.keys(event!.body).sort()).toEqual(['at', 'data', 'event', 'space_id']);
    expect(event!.body.event).toBe('client.question');
    expect(event!.body.space_id).toBe(w.spaceId);
    expect(event!.body.at).toMatch(/Z$/);
    expect(event!.body.data).toEqual({ contact_id: w.contactId, client: 'Acme GmbH', text });
  });

  it('a document is fetched, kept under the contact with a sniffed type, listed, and fires client.file', async () => {
    const w = await world();
    const { chatId, title } = await linked(w);
    const pdf = Buffer.from('%PDF-1.4\n% a tiny test file\n%%EOF\n');
    const fileId = bot.addFile(pdf, 'documents/file_1.bin');
    const update = bot.document(chatId, title, fileId, 'statement.txt', pdf.length);
    expect((await bot.deliver(update, origin)).status).toBe(200);
    expect(bot.callsOf('getFile').some((c) => c.params.file_id === fileId)).toBe(true);
    const chat = (
      await h.inject({
        method: 'GET',
        url: `/app/api/spaces/${w.spaceId}/contacts/${w.contactId}/chat`,
        session: w.owner.token,
      })
    ).json();
    expect(chat.messages).toHaveLength(1);
    const [file] = chat.messages;
    expect(file.file).toEqual({ name: 'statement.txt', size: pdf.length, content_type: 'application/pdf' });
    const download = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${w.spaceId}/contacts/${w.contactId}/chat/files/${file.id}`,
      session: w.owner.token,
    });
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('application/pdf');
    expect(download.headers['content-disposition']).toContain('attachment');
    expect(download.rawPayload.equals(pdf)).toBe(true);
    const events = await deliveredEvents(w, 'client.file');
    expect(events).toHaveLength(1);
    expect(events[0]!.signed).toBe(true);
    expect(events[0]!.body.data).toEqual({
      contact_id: w.contactId,
      client: 'Acme GmbH',
      name: 'statement.txt',
    });
  });

  it('a photo is kept too; a file over 20 MB is refused in the group and nothing is kept', async () => {
    const w = await world();
    const { chatId, title } = await linked(w);
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    await bot.deliver(bot.photo(chatId, title, bot.addFile(png, 'photos/p.jpg'), png.length), origin);
    const big = bot.addFile(Buffer.from('x'), 'documents/big.bin', 21 * 1024 * 1024);
    await bot.deliver(bot.document(chatId, title, big, 'huge.zip', 21 * 1024 * 1024), origin);
    const said = sentTo('sendMessage', chatId);
    expect(said.at(-1)!.params.text).toContain('larger than 20 MB');
    const chat = (
      await h.inject({
        method: 'GET',
        url: `/app/api/spaces/${w.spaceId}/contacts/${w.contactId}/chat`,
        session: w.owner.token,
      })
    ).json();
    expect(chat.messages.map((m: { file: { content_type: string } }) => m.file.content_type)).toEqual([
      'image/png',
    ]);
  });

  it('the seller answers from the app and the bot posts it in the space’s name; a viewer may not', async () => {
    const w = await world();
    const { chatId } = await linked(w);
    const res = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${w.spaceId}/contacts/${w.contactId}/chat/messages`,
      session: w.owner.token,
      payload: { text: 'Sent again, see above.' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ direction: 'out', kind: 'text', text: 'Sent again, see above.' });
    const said = sentTo('sendMessage', chatId);
    expect(said.at(-1)!.params.text).toBe('Northwind Books: Sent again, see above.');
    const viewer = await h.signup('Viewer');
    await h.addMember(w.owner, w.spaceId, viewer, 'viewer');
    const refused = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${w.spaceId}/contacts/${w.contactId}/chat/messages`,
      session: viewer.token,
      payload: { text: 'hi' },
    });
    expect(refused.statusCode).toBe(403);
    const empty = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${w.spaceId}/contacts/${w.contactId}/chat/messages`,
      session: w.owner.token,
      payload: { text: '' },
    });
    expect(empty.statusCode).toBe(422);
  });
});

async function chatInvoice(w: World, dueOn = '2026-12-31') {
  const account = await h.makeAccount(w.spaceId);
  const created = await h.inject({
    method: 'POST',
    url: '/integration/invoices',
    key: w.key.key,
    payload: {
      account_id: account.id,
      contact_id: w.contactId,
      client_name: 'Acme GmbH',
      seller: { name: 'Northwind Ltd' },
      due_on: dueOn,
      line_items: [
        { description: 'Consulting', unit_price: '100', quantity: '2', tax_kind: 'standard', tax_rate: '20' },
      ],
    },
  });
  expect(created.statusCode, created.body).toBe(201);
  return created.json() as { id: string; number: string; token: string };
}

const invoiceOf = (w: World, id: string) =>
  h.inject({ method: 'GET', url: `/integration/invoices/${id}`, key: w.key.key });

describe('invoices in chat', () => {
  it('send via chat posts the PDF with number, total, due date, page link and the buttons', async () => {
    const w = await world();
    const { chatId } = await linked(w);
    const invoice = await chatInvoice(w);
    const sent = await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/send`,
      key: w.key.key,
      payload: { via: 'chat' },
    });
    expect(sent.statusCode, sent.body).toBe(200);
    // The post is queued with the send and made after commit, by the chat worker.
    expect(sent.json()).toMatchObject({ status: 'sent', delivered_in_app: false });
    expect(sentTo('sendDocument', chatId)).toHaveLength(0);
    expect(await postQueued(w)).toBe(1);
    expect(await postQueued(w)).toBe(0);
    expect(sentTo('sendDocument', chatId)).toHaveLength(1);
    expect((await invoiceOf(w, invoice.id)).json()).toMatchObject({ delivered_in_app: true });
    const doc = sentTo('sendDocument', chatId).at(-1)!;
    const caption = String(doc.params.caption);
    expect(caption).toContain(`Invoice ${invoice.number}`);
    expect(caption).toContain('240.00 USD');
    expect(caption).toContain('Due: 2026-12-31');
    expect(caption).toContain(`${PUBLIC_URL}/i/${sent.json().url.split('/i/')[1]}`);
    const upload = Object.values(doc.files)[0]!;
    expect(upload.bytes.subarray(0, 5).toString()).toBe('%PDF-');
    expect(upload.name).toBe(`invoice-${invoice.number}.pdf`);
    const keyboard = (
      doc.params.reply_markup as { inline_keyboard: { text: string; callback_data: string }[][] }
    ).inline_keyboard;
    expect(keyboard.flat().map((b) => b.text)).toEqual([
      'I paid',
      'Need more time: 7 days',
      'Need more time: 14 days',
      'Need more time: 30 days',
    ]);
    expect(keyboard.flat().map((b) => b.callback_data)).toEqual([
      `paid:${invoice.id}`,
      `defer:${invoice.id}:7`,
      `defer:${invoice.id}:14`,
      `defer:${invoice.id}:30`,
    ]);
  });

  it('send via chat without a connected group is 422 delivery_unavailable and nothing is sent', async () => {
    const w = await world();
    const invoice = await chatInvoice(w);
    const res = await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/send`,
      key: w.key.key,
      payload: { via: 'chat' },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toBe('delivery_unavailable');
    expect((await invoiceOf(w, invoice.id)).json().status).toBe('draft');
  });

  it('"I paid" sets payer_marked_paid_at and fires invoice.claimed_paid; nothing is booked until confirmed', async () => {
    const w = await world();
    const { chatId, title } = await linked(w);
    const invoice = await chatInvoice(w);
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/send`,
      key: w.key.key,
      payload: { via: 'chat' },
    });
    expect(await postQueued(w)).toBe(1);
    expect((await bot.deliver(bot.press(chatId, title, `paid:${invoice.id}`), origin)).status).toBe(200);
    const answered = bot.callsOf('answerCallbackQuery').at(-1)!;
    expect(answered.params.text).toContain('will confirm the payment');
    const marked = (await invoiceOf(w, invoice.id)).json();
    expect(marked.status).toBe('sent');
    expect(marked.payments).toEqual([]);
    expect(Date.parse(marked.payer_marked_paid_at)).toBeGreaterThan(Date.now() - 60_000);
    const events = await deliveredEvents(w, 'invoice.claimed_paid');
    expect(events).toHaveLength(1);
    expect(events[0]!.signed).toBe(true);
    expect(events[0]!.body.data).toEqual({
      invoice_id: invoice.id,
      contact_id: w.contactId,
      client: 'Acme GmbH',
      number: invoice.number,
      total: '240',
      currency: 'USD',
    });
    const listed = (
      await h.inject({
        method: 'GET',
        url: `/app/api/spaces/${w.spaceId}/contacts/${w.contactId}/chat`,
        session: w.owner.token,
      })
    ).json();
    expect(listed.pending).toEqual([
      expect.objectContaining({
        invoice_id: invoice.id,
        payer_marked_paid_at: marked.payer_marked_paid_at,
        promised_on: null,
      }),
    ]);
    const confirmed = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${w.spaceId}/invoices/${invoice.id}/payer-claim/confirm`,
      session: w.owner.token,
      payload: {},
    });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect(confirmed.json()).toMatchObject({ status: 'paid', paid_amount: '240.00000000' });
    expect(confirmed.json().payments).toHaveLength(1);
  });

  it('reject clears the client’s mark and books nothing', async () => {
    const w = await world();
    const { chatId, title } = await linked(w);
    const invoice = await chatInvoice(w);
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/send`,
      key: w.key.key,
      payload: { via: 'none' },
    });
    await bot.deliver(bot.press(chatId, title, `paid:${invoice.id}`), origin);
    const rejected = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${w.spaceId}/invoices/${invoice.id}/payer-claim/reject`,
      session: w.owner.token,
      payload: {},
    });
    expect(rejected.statusCode).toBe(200);
    expect(rejected.json()).toMatchObject({ status: 'sent', payer_marked_paid_at: null, payments: [] });
    const again = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${w.spaceId}/invoices/${invoice.id}/payer-claim/confirm`,
      session: w.owner.token,
      payload: {},
    });
    expect(again.statusCode).toBe(422);
    expect(again.json().error).toBe('invoice_state');
  });

  it('"Need more time" sets promised_on and fires invoice.deferral_requested; accept moves the due date', async () => {
    const w = await world();
    const { chatId, title } = await linked(w);
    const invoice = await chatInvoice(w, '2099-01-10');
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/send`,
      key: w.key.key,
      payload: { via: 'none' },
    });
    await bot.deliver(bot.press(chatId, title, `defer:${invoice.id}:14`), origin);
    expect((await invoiceOf(w, invoice.id)).json()).toMatchObject({
      promised_on: '2099-01-24',
      due_on: '2099-01-10',
    });
    const events = await deliveredEvents(w, 'invoice.deferral_requested');
    expect(events).toHaveLength(1);
    expect(events[0]!.signed).toBe(true);
    expect(events[0]!.body.data).toEqual({
      invoice_id: invoice.id,
      contact_id: w.contactId,
      days: 14,
      due: '2099-01-24',
      client: 'Acme GmbH',
      number: invoice.number,
      total: '240',
      currency: 'USD',
    });
    const accepted = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${w.spaceId}/invoices/${invoice.id}/deferral/accept`,
      session: w.owner.token,
      payload: {},
    });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json()).toMatchObject({ due_on: '2099-01-24', promised_on: '2099-01-24' });
  });

  it('decline keeps the due date and clears the proposal', async () => {
    const w = await world();
    const { chatId, title } = await linked(w);
    const invoice = await chatInvoice(w, '2099-01-10');
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/send`,
      key: w.key.key,
      payload: { via: 'none' },
    });
    await bot.deliver(bot.press(chatId, title, `defer:${invoice.id}:7`), origin);
    const declined = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${w.spaceId}/invoices/${invoice.id}/deferral/decline`,
      session: w.owner.token,
      payload: {},
    });
    expect(declined.statusCode).toBe(200);
    expect(declined.json()).toMatchObject({ due_on: '2099-01-10', promised_on: null });
  });

  it('a button for another contact’s invoice changes nothing', async () => {
    const w = await world();
    const { chatId, title } = await linked(w);
    const other = await world();
    const invoice = await chatInvoice(other);
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/send`,
      key: other.key.key,
      payload: { via: 'none' },
    });
    await bot.deliver(bot.press(chatId, title, `paid:${invoice.id}`), origin);
    expect((await invoiceOf(other, invoice.id)).json().payer_marked_paid_at).toBeNull();
    expect(bot.callsOf('answerCallbackQuery').at(-1)!.params.text).toContain('not one of this group');
  });

  it('remind via chat posts the reminder; without via it goes to the group the contact has', async () => {
    const w = await world();
    const { chatId } = await linked(w);
    const invoice = await chatInvoice(w);
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/send`,
      key: w.key.key,
      payload: { via: 'none' },
    });
    const res = await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/remind`,
      key: w.key.key,
      payload: { message: 'Friendly nudge' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ invoice_id: invoice.id, reminded: true, via: ['chat'] });
    expect(await postQueued(w)).toBe(1);
    const doc = sentTo('sendDocument', chatId).at(-1)!;
    expect(String(doc.params.caption)).toContain(`Reminder: invoice ${invoice.number}`);
    const nudge = sentTo('sendMessage', chatId).at(-1)!;
    expect(nudge.params.text).toBe('Northwind Ltd: Friendly nudge');
  });
});

describe('plans', () => {
  it('a downgraded space keeps its group readable, but nothing is posted to it', async () => {
    const w = await world();
    const { chatId, title } = await linked(w);
    await bot.deliver(bot.text(chatId, title, 'before the downgrade'), origin);
    const patched = await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${w.spaceId}`,
      session: w.owner.token,
      payload: { plan: 'starter' },
    });
    expect(patched.statusCode).toBe(200);
    const answer = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${w.spaceId}/contacts/${w.contactId}/chat/messages`,
      session: w.owner.token,
      payload: { text: 'hello' },
    });
    expect(answer.statusCode).toBe(403);
    expect(answer.json().error).toBe('plan_required');
    const invoice = await chatInvoice(w);
    const send = await h.inject({
      method: 'POST',
      url: `/integration/invoices/${invoice.id}/send`,
      key: w.key.key,
      payload: { via: 'chat' },
    });
    expect(send.statusCode).toBe(403);
    expect((await mint(w)).statusCode).toBe(403);
    const chat = (
      await h.inject({
        method: 'GET',
        url: `/app/api/spaces/${w.spaceId}/contacts/${w.contactId}/chat`,
        session: w.owner.token,
      })
    ).json();
    expect(chat).toMatchObject({ connected: true, can_post: false });
    expect(chat.messages.map((m: { text: string }) => m.text)).toEqual(['before the downgrade']);
    expect((await state(w)).json().connected).toBe(true);
  });
});

describe('invoices posted to chat after commit', () => {
  const sendByChat = (w: World, id: string) =>
    h.inject({
      method: 'POST',
      url: `/integration/invoices/${id}/send`,
      key: w.key.key,
      payload: { via: 'chat' },
    });
  const postsOf = (invoiceId: string) =>
    h.db
      .selectFrom('invoice_chat_posts')
      .select(['id', 'state', 'attempts', 'last_error'])
      .where('invoice_id', '=', invoiceId)
      .execute();
  const deliveryOf = (invoiceId: string) =>
    h.db
      .selectFrom('invoice_deliveries')
      .select(['via', 'chat_post_id'])
      .where('invoice_id', '=', invoiceId)
      .execute();

  it('with Telegram down the send still answers at once; the post waits, and is made once when Telegram is back', async () => {
    const w = await world();
    const { chatId } = await linked(w);
    const invoice = await chatInvoice(w);
    bot.fail('sendDocument', 502, 'Bad Gateway');
    try {
      const sent = await sendByChat(w, invoice.id);
      expect(sent.statusCode, sent.body).toBe(200);
      expect(sent.json()).toMatchObject({ status: 'sent', delivered_in_app: false });
      const [post] = await postsOf(invoice.id);
      expect(await deliveryOf(invoice.id)).toEqual([{ via: ['chat'], chat_post_id: post!.id }]);
      // Telegram's 502 leaves the outcome unknown: the row waits for its next attempt.
      expect(await postQueued(w)).toBe(0);
      expect(await postsOf(invoice.id)).toMatchObject([{ state: 'pending', attempts: 1 }]);
      expect((await postsOf(invoice.id))[0]!.last_error).toMatch(/Telegram/);
      expect((await invoiceOf(w, invoice.id)).json()).toMatchObject({
        status: 'sent',
        delivered_in_app: false,
      });
    } finally {
      bot.heal('sendDocument');
    }
    // Not due again before its back-off; due after it.
    expect(await postQueued(w)).toBe(0);
    const later: Clock = { now: () => new Date(h.clock.now().getTime() + CHAT_POST_RETRY_DELAYS_MS[0]!) };
    const before = sentTo('sendDocument', chatId).length;
    expect(await postQueued(w, later)).toBe(1);
    expect(await postQueued(w, later)).toBe(0);
    expect(sentTo('sendDocument', chatId).length).toBe(before + 1);
    expect(await postsOf(invoice.id)).toMatchObject([{ state: 'sent', attempts: 2 }]);
    expect((await invoiceOf(w, invoice.id)).json()).toMatchObject({ status: 'sent', delivered_in_app: true });
  });

  it('gives a post up at once when Telegram refuses it for good (the bot was removed), and the invoice says it was not delivered', async () => {
    const w = await world();
    await linked(w);
    const invoice = await chatInvoice(w);
    expect((await sendByChat(w, invoice.id)).statusCode).toBe(200);
    bot.fail('sendDocument', 403, 'Forbidden: bot was kicked from the group chat');
    try {
      expect(await postQueued(w)).toBe(0);
    } finally {
      bot.heal('sendDocument');
    }
    expect(await postsOf(invoice.id)).toMatchObject([{ state: 'given_up', attempts: 1 }]);
    expect((await postsOf(invoice.id))[0]!.last_error).toContain('bot was kicked');
    expect(await postQueued(w)).toBe(0);
    expect((await invoiceOf(w, invoice.id)).json()).toMatchObject({
      status: 'sent',
      delivered_in_app: false,
    });
  });
});
