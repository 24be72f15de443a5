import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness, Key, User } from '../harness.ts';
import { BOT_TOKEN, type BotApiServer, startBotApiServer } from '../support/bot-api-server.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// The Chats screen as a seller meets it in Chromium: the connected group, the client's
// question and file, an answer posted through the bot, and "I paid" / "Need more time"
// decided with the buttons. A viewer sees the same screen without any write control.

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));

let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
let bot: BotApiServer;
let h: Harness;
let base: string;

beforeAll(async () => {
  if (!chromiumInstalled) return;
  bot = await startBotApiServer();
  app = await startBrowserApp({
    env: { TELEGRAM_BOT_TOKEN: BOT_TOKEN, TELEGRAM_API_ROOT: bot.root, RATE_LIMIT_PER_MINUTE: '100000' },
  });
  ({ h, base } = app);
});
afterAll(async () => {
  await app?.close();
  await bot?.close();
});
beforeEach(({ skip }) => requireChromium(skip));

async function signedIn(token: string): Promise<BrowserContext> {
  const context = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addCookies([{ name: 'tb_session', value: token, url: base }]);
  return context;
}

async function shoot(page: Page, name: string) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  await page.screenshot({ path: `${RESULTS_DIR}${name}.png`, fullPage: true });
}

type Scene = {
  owner: User;
  spaceId: string;
  key: Key;
  contactId: string;
  chatId: number;
  paidId: string;
  deferId: string;
};

async function invoice(scene: Omit<Scene, 'paidId' | 'deferId'>, number: string) {
  const account = await h.makeAccount(scene.spaceId);
  const created = await h.inject({
    method: 'POST',
    url: '/integration/invoices',
    key: scene.key.key,
    payload: {
      account_id: account.id,
      contact_id: scene.contactId,
      number,
      client_name: 'Acme GmbH',
      due_on: '2099-03-01',
      line_items: [
        { description: 'Design', unit_price: '1000', quantity: '1', tax_kind: 'zero', tax_rate: '0' },
      ],
    },
  });
  const id = created.json().id as string;
  const sent = await h.inject({
    method: 'POST',
    url: `/integration/invoices/${id}/send`,
    key: scene.key.key,
    payload: { via: 'chat' },
  });
  expect(sent.statusCode, sent.body).toBe(200);
  return id;
}

/** A connected group where the client asked, sent a file, said "I paid" on one invoice and asked for time on another. */
async function scene(): Promise<Scene> {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner, { name: 'Northwind Books' });
  const key = await h.issueKey(owner, spaceId, { scopes: ['invoices', 'contacts', 'chats'] });
  const contact = await h.inject({
    method: 'POST',
    url: '/integration/contacts',
    key: key.key,
    payload: { name: 'Acme GmbH', kind: 'company' },
  });
  const contactId = contact.json().id as string;
  const code = (
    await h.inject({ method: 'POST', url: `/integration/contacts/${contactId}/telegram-link`, key: key.key })
  ).json().code;
  const chatId = -4_000_000_000 - Math.floor(Math.random() * 1_000_000);
  const handle = (update: Record<string, unknown>) => h.deps.chat.bot!.handle(update as never);
  await handle(bot.text(chatId, 'Acme × Northwind', `/link ${code}`));
  await handle(bot.text(chatId, 'Acme × Northwind', 'Could you add our PO number to the next invoice?'));
  const pdf = Buffer.from('%PDF-1.4\nsigned contract\n%%EOF\n');
  await handle(
    bot.document(chatId, 'Acme × Northwind', bot.addFile(pdf, 'documents/c.pdf'), 'contract.pdf', pdf.length),
  );
  const partial = { owner, spaceId, key, contactId, chatId };
  const paidId = await invoice(partial, 'INV-2001');
  const deferId = await invoice(partial, 'INV-2002');
  await handle(bot.press(chatId, 'Acme × Northwind', `paid:${paidId}`));
  await handle(bot.press(chatId, 'Acme × Northwind', `defer:${deferId}:30`));
  return { ...partial, paidId, deferId };
}

describe('the Chats screen in a browser', () => {
  it('lists the group, shows question, file and pending answers, posts an answer and settles both buttons', async () => {
    const s = await scene();
    const context = await signedIn(s.owner.token);
    const page = await context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${base}/app/books/${s.spaceId}/chats`);
    expect(await page.locator('table').textContent()).toContain('Acme × Northwind');
    await shoot(page, 'chats-list');
    await page.click('text=Acme GmbH');
    await page.waitForURL(`**/chats/${s.contactId}`);
    const body = (await page.locator('main').textContent()) ?? '';
    expect(body).toContain('Could you add our PO number to the next invoice?');
    expect(body).toContain('contract.pdf');
    expect(body).toContain('application/pdf');
    expect(body).toContain('1,000.00 USD');
    expect(body).toContain('The client asks to pay by Mar 31, 2099');
    await shoot(page, 'chats-contact');
    await page.fill('#field-text', 'Thanks, we will add it.');
    await page.click('button:has-text("Send answer")');
    await page.waitForSelector('text=Your answer was posted in the group.');
    const said = bot
      .callsOf('sendMessage')
      .filter((c) => String(c.params.chat_id) === String(s.chatId))
      .at(-1)!;
    expect(said.params.text).toBe('Northwind Books: Thanks, we will add it.');
    await page.click('button:has-text("Confirm payment")');
    await page.waitForSelector('text=The payment was recorded.');
    await page.click('button:has-text("Accept new due date")');
    await page.waitForSelector('text=The due date moved to the date the client asked for.');
    expect(await page.locator('main').textContent()).toContain(
      'Nothing: no “I paid” or “Need more time” to decide.',
    );
    await shoot(page, 'chats-contact-settled');
    const paid = await h.inject({ method: 'GET', url: `/integration/invoices/${s.paidId}`, key: s.key.key });
    expect(paid.json().status).toBe('paid');
    const moved = await h.inject({
      method: 'GET',
      url: `/integration/invoices/${s.deferId}`,
      key: s.key.key,
    });
    expect(moved.json().due_on).toBe('2099-03-31');
    await context.close();
  });

  it('shows a viewer no write control and refuses their writes; another book is 404; no session goes to log in', async () => {
    const s = await scene();
    const viewer = await h.signup('Viewer');
    await h.addMember(s.owner, s.spaceId, viewer, 'viewer');
    const context = await signedIn(viewer.token);
    const page = await context.newPage();
    await page.goto(`${base}/app/books/${s.spaceId}/chats/${s.contactId}`);
    expect(await page.locator('main form').count()).toBe(0);
    expect(await page.locator('main').textContent()).toContain('Could you add our PO number');
    await shoot(page, 'chats-contact-viewer');
    await context.close();
    const refused = await h.inject({
      method: 'POST',
      url: `/app/books/${s.spaceId}/chats/${s.contactId}/answer`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `tb_session=${viewer.token}` },
      payload: `_csrf=${viewer.csrf}&text=hi`,
    });
    expect(refused.statusCode).toBe(403);
    const stranger = await h.signup('Stranger');
    const other = await h.inject({
      method: 'GET',
      url: `/app/books/${s.spaceId}/chats/${s.contactId}`,
      headers: { cookie: `tb_session=${stranger.token}` },
    });
    expect(other.statusCode).toBe(404);
    const anonymous = await h.inject({ method: 'GET', url: `/app/books/${s.spaceId}/chats/${s.contactId}` });
    expect(anonymous.statusCode).toBe(303);
  });

  it('shows a refused answer in place, next to the field', async () => {
    const s = await scene();
    const res = await h.inject({
      method: 'POST',
      url: `/app/books/${s.spaceId}/chats/${s.contactId}/answer`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `tb_session=${s.owner.token}` },
      payload: `_csrf=${s.owner.csrf}&text=${'x'.repeat(4001)}`,
    });
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('id="field-text-error"');
    expect(res.body).toContain('xxxx');
    // Rejecting twice: the second is refused on the contact's screen, in place.
    const reject = (invoiceId: string) =>
      h.inject({
        method: 'POST',
        url: `/app/books/${s.spaceId}/chats/invoices/${invoiceId}/payer-claim/reject`,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie: `tb_session=${s.owner.token}`,
        },
        payload: `_csrf=${s.owner.csrf}&contact_id=${s.contactId}`,
      });
    expect((await reject(s.paidId)).statusCode).toBe(303);
    const again = await reject(s.paidId);
    expect(again.statusCode).toBe(422);
    expect(again.body).toContain('The client has not marked this open invoice paid.');
    expect(again.body).toContain('Chat with Acme GmbH');
  });
});
