import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ParsedMail } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import { invoiceMailAttachments } from '../src/features/invoices/index.ts';
import { mailerFromConfig } from '../src/platform/mail/mailer.ts';
import { drainMailOutbox } from '../src/platform/mail/outbox.ts';
import { type SmtpFault, startSmtpFault } from './fixtures/smtp-fault.ts';
import { createHarness, type Harness, type User } from './harness.ts';
import { holdMailOutbox } from './support/turns.ts';

holdMailOutbox();

// What a client reads is written in the book's time zone and locale: the pay page (with its bank
// transfer), the public invoice and quote pages, the invoice's mail and its PDF. A date alone
// (issue, due, valid until) is its day in every zone; a moment (a quote's answer) is the book's
// local time. The clock stands at 13:30 UTC on 27 November 2026: already the 28th in Auckland.

const RESULTS_DIR = fileURLToPath(new URL('../test-results/book-format/', import.meta.url));
const NOW = '2026-11-27T13:30:00.000Z';

let h: Harness;
let smtp: SmtpFault;

beforeAll(async () => {
  smtp = await startSmtpFault('accept');
  h = await createHarness({
    clock: new ManualClock(NOW),
    env: {
      RATE_LIMIT_PER_MINUTE: '100000',
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Billing <billing@tollbook.test>',
    },
  });
  mkdirSync(RESULTS_DIR, { recursive: true });
});
afterAll(async () => {
  await h?.close();
  await smtp?.close();
});

type Book = { owner: User; spaceId: string; accountId: string };

const api = (user: User, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: Record<string, unknown>) =>
  h.inject({ method, url, session: user.token, ...(payload ? { payload } : {}) });

/** A book in a zone and locale, with a euro bank account that has an IBAN. */
async function book(timeZone: string, locale: string): Promise<Book> {
  const owner = await h.signup('Owner');
  const spaceId = await h.createSpace(owner, {
    name: 'Nordlicht',
    base_currency: 'EUR',
    time_zone: timeZone,
    locale,
  });
  const account = await h.makeAccount(spaceId, { kind: 'bank', name: 'Bank (EUR)', currency: 'EUR' });
  const requisites = await api(owner, 'PATCH', `/app/api/spaces/${spaceId}/accounts/${account.id}`, {
    requisites: {
      scheme: 'sepa',
      iban: 'DE89370400440532013000',
      bic: 'COBADEFFXXX',
      holder: 'Nordlicht Studio GmbH',
    },
  });
  expect(requisites.statusCode, requisites.body).toBe(200);
  return { owner, spaceId, accountId: account.id };
}

/** A document issued 27 November 2026 for 1234.50 EUR, sent by `via`. */
async function sent(b: Book, kind: 'invoice' | 'quote', via: 'none' | 'email') {
  const created = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices`, {
    kind,
    account_id: b.accountId,
    client_name: 'Acme GmbH',
    client_email: 'ap@acme.example',
    issued_on: '2026-11-27',
    due_on: '2026-12-27',
    line_items: [{ description: 'Design workshop', unit_price: '1234.5', quantity: '1', unit: 'day' }],
  });
  expect(created.statusCode, created.body).toBe(201);
  const document = created.json() as { id: string; number: string; token: string };
  const send = await api(b.owner, 'POST', `/app/api/spaces/${b.spaceId}/invoices/${document.id}/send`, {
    via,
  });
  expect(send.statusCode, send.body).toBe(200);
  return document;
}

async function pdfText(b: Book, invoiceId: string, name: string): Promise<string> {
  const pdf = await api(b.owner, 'GET', `/app/api/spaces/${b.spaceId}/invoices/${invoiceId}/pdf`);
  expect(pdf.statusCode).toBe(200);
  const path = join(mkdtempSync(join(tmpdir(), 'tb-format-')), `${name}.pdf`);
  writeFileSync(path, pdf.rawPayload);
  // The first page as PNG, to be looked at.
  execFileSync('pdftoppm', ['-png', '-r', '110', '-f', '1', '-l', '1', path, join(RESULTS_DIR, name)]);
  return execFileSync('pdftotext', ['-layout', path, '-'], { encoding: 'utf8' });
}

const publicPage = (url: string) => h.inject({ method: 'GET', url });

describe('a book in Europe/Berlin writing de-DE', () => {
  it('writes the invoice page’s dates as days and its amounts in German, and so the pay page and its bank transfer', async () => {
    const b = await book('Europe/Berlin', 'de-DE');
    const invoice = await sent(b, 'invoice', 'none');
    const page = await publicPage(`/i/${invoice.token}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<time datetime="2026-11-27">27.11.2026</time>');
    expect(page.body).toContain('<time datetime="2026-12-27">27.12.2026</time>');
    expect(page.body).toContain('1.234,50 EUR');
    expect(page.body).toMatch(/id="invoice-open">1\.234,50 EUR</);
    expect(page.body).not.toContain('1,234.50');
    expect(page.body).not.toContain('Issued 2026-11-27');

    const pay = await h.inject({ method: 'POST', url: `/i/${invoice.token}/pay` });
    expect(pay.statusCode, pay.body).toBe(303);
    const payPage = await publicPage(String(pay.headers.location));
    expect(payPage.statusCode).toBe(200);
    expect(payPage.body).toMatch(/id="amount">1\.234,50 EUR</);
    expect(payPage.body).toContain('Transfer <strong>1.234,50 EUR</strong>');
    expect(payPage.body).toMatch(/id="bank-amount">1\.234,50 EUR</);
    // What a bank form takes stays a plain number, and the IBAN is grouped in fours.
    expect(payPage.body).toContain('data-copy="1234.5"');
    expect(payPage.body).toContain('DE89 3704 0044 0532 0130 00');
    expect(payPage.body).not.toContain('1,234.50');
    // The status the page polls writes what has arrived in the same locale.
    const status = await h.inject({ method: 'GET', url: `${pay.headers.location}/status` });
    expect(status.json()).toMatchObject({ received_label: '0,00 EUR' });
  });

  it('mails the invoice with its dates and amounts in German, text and HTML', async () => {
    const b = await book('Europe/Berlin', 'de-DE');
    const before = smtp.received.length;
    const invoice = await sent(b, 'invoice', 'email');
    const worker = mailerFromConfig(h.deps.config);
    try {
      const delivered = await drainMailOutbox(
        {
          db: h.db,
          clock: h.deps.clock,
          mailer: worker,
          attachmentsFor: ({ spaceId, invoiceId }) =>
            invoiceMailAttachments(h.db, h.deps.config.publicUrl, spaceId, invoiceId),
        },
        { spaceIds: [b.spaceId] },
      );
      expect(delivered).toBe(1);
    } finally {
      worker.close();
    }
    expect(smtp.received).toHaveLength(before + 1);
    const mail = smtp.received.at(-1)?.mail as ParsedMail;
    expect(mail.subject).toBe(`Invoice ${invoice.number} from Nordlicht`);
    expect(mail.text).toContain('Total 1.234,50 EUR, open 1.234,50 EUR, due 27.12.2026.');
    expect(String(mail.html)).toContain('>27.11.2026</time>');
    expect(String(mail.html)).toContain('>27.12.2026</time>');
    expect(String(mail.html)).toContain('1.234,50 EUR');
    expect(String(mail.html)).not.toContain('1,234.50');
    // The attached PDF is the same document, in the same words.
    const attached = mail.attachments[0];
    expect(attached?.contentType).toBe('application/pdf');
    const path = join(mkdtempSync(join(tmpdir(), 'tb-format-')), 'mailed.pdf');
    writeFileSync(path, attached?.content ?? Buffer.alloc(0));
    expect(execFileSync('pdftotext', ['-layout', path, '-'], { encoding: 'utf8' })).toContain('27.12.2026');
  });

  it('prints the PDF’s dates and amounts in German', async () => {
    const b = await book('Europe/Berlin', 'de-DE');
    const invoice = await sent(b, 'invoice', 'none');
    const text = await pdfText(b, invoice.id, 'invoice-de-DE');
    for (const expected of ['27.11.2026', '27.12.2026', '1.234,50', '1.234,50 EUR', 'Amount due'])
      expect(text, expected).toContain(expected);
    expect(text).not.toContain('2026-11-27');
    expect(text).not.toContain('1,234.50');
  });
});

describe('a book west of UTC: America/Los_Angeles writing en-US', () => {
  it('keeps a date alone on its day (UTC midnight of the 27th is the 26th there)', async () => {
    const b = await book('America/Los_Angeles', 'en-US');
    const invoice = await sent(b, 'invoice', 'none');
    const page = await publicPage(`/i/${invoice.token}`);
    expect(page.body).toContain('>Nov 27, 2026</time>');
    expect(page.body).not.toContain('Nov 26, 2026');
    const text = await pdfText(b, invoice.id, 'invoice-en-US');
    expect(text).toContain('Nov 27, 2026');
    expect(text).toContain('Dec 27, 2026');
    expect(text).not.toContain('Nov 26, 2026');
  });
});

describe('a book east of UTC: Pacific/Auckland writing en-NZ', () => {
  it('writes the moment a quote was accepted in Auckland time, already the next day', async () => {
    const b = await book('Pacific/Auckland', 'en-NZ');
    const quote = await sent(b, 'quote', 'none');
    const accepted = await h.inject({
      method: 'POST',
      url: `/i/${quote.token}/accept`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=Jane+Buyer',
    });
    expect(accepted.statusCode, accepted.body).toBe(303);
    const page = await publicPage(`/i/${quote.token}`);
    expect(page.statusCode).toBe(200);
    // 13:30 UTC on the 27th is 02:30 on the 28th in Auckland (NZDT, UTC+13).
    expect(page.body).toMatch(
      /Accepted by Jane Buyer on <time datetime="2026-11-27T13:30:00.000Z"[^>]*>28 Nov 2026, 2:30\sam<\/time>/u,
    );
    expect(page.body).toContain(
      '>27 Nov 2026</time>, valid until <time datetime="2026-12-27">27 Dec 2026</time>',
    );
    expect(page.body).toContain('1,234.50 EUR');
    // Its quantity reads as the invoice page and the PDF write it.
    expect(page.body).toContain('<td class="num">1.00 day</td>');
  });
});

describe('a locale whose script the PDF’s typeface lacks', () => {
  it('prints ja-JP dates (digits only) as Japanese write them, and zh-CN ones in English, never as missing glyphs', async () => {
    const japanese = await book('Asia/Tokyo', 'ja-JP');
    const ja = await sent(japanese, 'invoice', 'none');
    const jaText = await pdfText(japanese, ja.id, 'invoice-ja-JP');
    expect(jaText).toContain('2026/11/27');
    expect(jaText).toContain('1,234.50 EUR');
    const chinese = await book('Asia/Shanghai', 'zh-CN');
    const zh = await sent(chinese, 'invoice', 'none');
    const zhText = await pdfText(chinese, zh.id, 'invoice-zh-CN');
    // DejaVu Sans has no 年, 月 or 日: the document is written in English instead.
    expect(zhText).toContain('Nov 27, 2026');
    expect(zhText).not.toMatch(/[年月日]/u);
    // The page, drawn by the browser with its own fonts, keeps the book's locale.
    const page = await publicPage(`/i/${zh.token}`);
    expect(page.body).toContain('>2026年11月27日</time>');
  });
});

describe('the client’s balance page of a book in Pacific/Auckland writing de-DE', () => {
  it('writes the balance in German and the moment of a call in Auckland time', async () => {
    const world = await h.world({ scopes: ['payments'] });
    const settings = await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${world.spaceId}`,
      session: world.owner.token,
      payload: { time_zone: 'Pacific/Auckland', locale: 'de-DE' },
    });
    expect(settings.statusCode, settings.body).toBe(200);
    const profile = await h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${world.spaceId}/profile`,
      session: world.owner.token,
      payload: { trading_name: 'Kiwi Cloud' },
    });
    expect(profile.statusCode, profile.body).toBe(200);
    const bank = await h.makeAccount(world.spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
    const charge = () =>
      h.inject({
        method: 'POST',
        url: '/integration/charges',
        key: world.key.key,
        payload: { client_ref: 'acme', account_id: bank.id, amount: '2' },
      });
    expect((await charge()).json().paid).toBe(false);
    const granted = await h.inject({
      method: 'POST',
      url: `/app/api/spaces/${world.spaceId}/client-credits/acme/adjustments`,
      session: world.owner.token,
      payload: { amount: '1234.5', reason: 'Welcome credit' },
    });
    expect(granted.statusCode, granted.body).toBe(201);
    expect((await charge()).json()).toMatchObject({ paid: true, balance_usd: '1232.50000000' });
    const credits = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${world.spaceId}/client-credits`,
      session: world.owner.token,
    });
    const page = await publicPage(new URL(credits.json().items[0].balance_url as string).pathname);
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/id="balance">1\.232,50 USD</);
    // The client reads the business's trading name, never the book's handle.
    expect(page.body).toContain('Prepaid balance with <strong>Kiwi Cloud</strong>');
    expect(page.body).not.toContain(profile.json().public_handle ?? 'test-space-');
    // 13:30 UTC on the 27th is 02:30 on the 28th in Auckland.
    expect(page.body).toContain('>28.11.2026, 02:30</time>');
    expect(page.body).toContain('2,00 USD');
    expect(page.body).not.toContain('<td>2026-11-27 13:30</td>');
  });
});
