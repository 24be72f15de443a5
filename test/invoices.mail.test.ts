import { mkdtempSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../src/core/clock.ts';
import { ManualClock } from '../src/core/clock.ts';
import { invoiceMailAttachments, sendAutomaticReminders } from '../src/features/invoices/index.ts';
import { createMailer, type Mailer, mailerFromConfig } from '../src/platform/mail/mailer.ts';
import { drainMailOutbox } from '../src/platform/mail/outbox.ts';
import { createHarness, type Harness } from './harness.ts';
import { holdMailOutbox } from './support/turns.ts';

holdMailOutbox();

// Invoices by mail, to a real SMTP server on loopback, parsed back as a mail client would.

let h: Harness;
let smtp: SMTPServer;
let refuse = false;
const received: { envelopeTo: string[]; mail: ParsedMail }[] = [];

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      if (refuse) {
        stream.resume();
        stream.on('end', () => callback(Object.assign(new Error('mailbox full'), { responseCode: 552 })));
        return;
      }
      simpleParser(stream)
        .then((mail) => {
          received.push({ envelopeTo: session.envelope.rcptTo.map((rcpt) => rcpt.address), mail });
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  h = await createHarness({
    env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'Billing <billing@tollbook.test>' },
  });
});
afterAll(async () => {
  await h?.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

/** The mail worker's round for one space (mail leaves after commit, through the outbox). */
async function deliver(
  harness: Harness,
  spaceId: string,
  clock: Clock = harness.deps.clock,
  mailer?: Mailer,
) {
  const worker = mailer ?? mailerFromConfig(harness.deps.config);
  try {
    return await drainMailOutbox(
      {
        db: harness.db,
        clock,
        mailer: worker,
        attachmentsFor: ({ spaceId: space, invoiceId }) =>
          invoiceMailAttachments(harness.db, harness.deps.config.publicUrl, space, invoiceId),
      },
      { spaceIds: [spaceId] },
    );
  } finally {
    if (!mailer) worker.close();
  }
}

async function invoice(extra: Record<string, unknown> = {}) {
  const { key } = await h.world({ scopes: ['invoices'] });
  const account = await h.makeAccount(key.spaceId);
  const res = await h.inject({
    method: 'POST',
    url: '/integration/invoices',
    key: key.key,
    payload: {
      account_id: account.id,
      client_name: 'Acme <GmbH>',
      client_email: 'ap@acme.test',
      seller: { name: 'Seller Ltd' },
      due_on: '2026-12-31',
      line_items: [
        { description: 'Consulting', unit_price: '100', quantity: '2', tax_kind: 'standard', tax_rate: '20' },
      ],
      ...extra,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { key, invoice: res.json() as { id: string; number: string; url: string } };
}

describe('POST /integration/invoices/{id}/send via email', () => {
  it('mails the invoice as HTML and text with the PDF attached and the public page linked', async () => {
    const { key, invoice: created } = await invoice();
    const before = received.length;
    const res = await h.inject({
      method: 'POST',
      url: `/integration/invoices/${created.id}/send`,
      key: key.key,
      payload: { message: 'Thanks for your business', cc: ['boss@acme.test'] },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().status).toBe('sent');
    expect(received).toHaveLength(before);
    expect(await deliver(h, key.spaceId)).toBe(1);
    expect(received).toHaveLength(before + 1);
    const { envelopeTo, mail } = received.at(-1)!;
    expect(envelopeTo.sort()).toEqual(['ap@acme.test', 'boss@acme.test']);
    expect(mail.subject).toBe(`Invoice ${created.number} from Seller Ltd`);
    expect(mail.from?.value[0]).toMatchObject({ name: 'Seller Ltd', address: 'billing@tollbook.test' });
    expect(mail.html).toContain('Acme &lt;GmbH>');
    expect(mail.html).not.toContain('<GmbH>');
    expect(mail.html).toContain(`href="${created.url}"`);
    expect(mail.text).toContain('Thanks for your business');
    expect(mail.text).toContain('Total 240.00 USD');
    expect(mail.attachments).toHaveLength(1);
    const pdf = mail.attachments[0]!;
    expect(pdf).toMatchObject({ contentType: 'application/pdf', filename: `invoice-${created.number}.pdf` });
    expect(pdf.content.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdf.content.length).toBeGreaterThan(1000);
  });

  it('mails a quote as a quote: valid until, a link to accept or decline it, nothing to pay', async () => {
    const { key, invoice: quote } = await invoice({ kind: 'quote', due_on: '2027-01-31' });
    expect(quote.number).toMatch(/^QUO-/);
    const before = received.length;
    const res = await h.inject({
      method: 'POST',
      url: `/integration/invoices/${quote.id}/send`,
      key: key.key,
      payload: {},
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(await deliver(h, key.spaceId)).toBe(1);
    expect(received).toHaveLength(before + 1);
    const { mail } = received.at(-1)!;
    expect(mail.subject).toBe(`Quote ${quote.number} from Seller Ltd`);
    expect(mail.text).toContain('Total 240.00 USD, valid until Jan 31, 2027.');
    expect(mail.text).toContain(`Accept or decline it here: ${quote.url}`);
    expect(mail.html).toContain(`href="${quote.url}"`);
    expect(mail.html).toContain('View the quote to accept or decline it');
    for (const body of [mail.text ?? '', String(mail.html)]) {
      expect(body).not.toMatch(/\bpay\b/i);
      expect(body).not.toContain(', due ');
    }
    expect(mail.attachments.map((file) => file.filename)).toEqual([`quote-${quote.number}.pdf`]);
  });

  it('mails a reminder to the client and records it', async () => {
    const { key, invoice: created } = await invoice();
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${created.id}/send`,
      key: key.key,
      payload: { via: 'none' },
    });
    const before = received.length;
    const res = await h.inject({
      method: 'POST',
      url: `/integration/invoices/${created.id}/remind`,
      key: key.key,
      payload: { message: 'Friendly nudge' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ reminded: true, via: ['email'] });
    expect(await deliver(h, key.spaceId)).toBe(1);
    expect(received).toHaveLength(before + 1);
    expect(received.at(-1)!.mail.subject).toBe(`Reminder: invoice ${created.number} from Seller Ltd`);
  });

  it('refuses an invoice without a client email; a mail the server refuses leaves the invoice sent and the mail given up', async () => {
    const { key, invoice: created } = await invoice({ client_email: '' });
    const noAddress = await h.inject({
      method: 'POST',
      url: `/integration/invoices/${created.id}/send`,
      key: key.key,
      payload: {},
    });
    expect(noAddress.statusCode).toBe(422);
    expect(noAddress.json()).toMatchObject({ error: 'invalid_request', details: { field: 'to' } });
    const draft = await h.inject({ method: 'GET', url: `/integration/invoices/${created.id}`, key: key.key });
    expect(draft.json().status).toBe('draft');
    const sent = await h.inject({
      method: 'POST',
      url: `/integration/invoices/${created.id}/send`,
      key: key.key,
      payload: { to: 'someone@acme.test' },
    });
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.json().status).toBe('sent');
    refuse = true;
    try {
      expect(await deliver(h, key.spaceId)).toBe(0);
    } finally {
      refuse = false;
    }
    const mail = await h.db
      .selectFrom('mail_outbox')
      .select(['state', 'last_error'])
      .where('invoice_id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(mail).toMatchObject({ state: 'given_up' });
    expect(mail.last_error).toContain('mailbox full');
  });
});

describe('a credit note by email', () => {
  it('mails the credit note with its PDF and the invoice it corrects, no pay link, and stays issued', async () => {
    const { key, invoice: corrected } = await invoice();
    const sent = await h.inject({
      method: 'POST',
      url: `/integration/invoices/${corrected.id}/send`,
      key: key.key,
      payload: { via: 'none' },
    });
    expect(sent.statusCode, sent.body).toBe(200);
    const created = await h.inject({
      method: 'POST',
      url: '/integration/invoices',
      key: key.key,
      payload: {
        kind: 'credit_note',
        corrects_invoice_id: corrected.id,
        account_id: (
          await h.inject({ method: 'GET', url: `/integration/invoices/${corrected.id}`, key: key.key })
        ).json().account_id,
        client_name: 'Acme <GmbH>',
        seller: { name: 'Seller Ltd' },
        line_items: [
          { description: 'One hour not worked', unit_price: '100', tax_kind: 'standard', tax_rate: '20' },
        ],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const credit = created.json() as { id: string; number: string; status: string; client_email: string };
    expect(credit.status).toBe('issued');
    // It takes the corrected invoice's client, address included.
    expect(credit.client_email).toBe('ap@acme.test');
    // A chat is no road for a credit note.
    const chat = await h.inject({
      method: 'POST',
      url: `/integration/invoices/${credit.id}/send`,
      key: key.key,
      payload: { via: 'chat' },
    });
    expect(chat.statusCode, chat.body).toBe(422);
    expect(chat.json()).toMatchObject({ error: 'invalid_request', details: { field: 'via' } });
    const before = received.length;
    const res = await h.inject({
      method: 'POST',
      url: `/integration/invoices/${credit.id}/send`,
      key: key.key,
      payload: { message: 'As agreed on the phone' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().status).toBe('issued');
    expect(await deliver(h, key.spaceId)).toBe(1);
    expect(received).toHaveLength(before + 1);
    const { envelopeTo, mail } = received.at(-1)!;
    expect(envelopeTo).toEqual(['ap@acme.test']);
    expect(mail.subject).toBe(`Credit note ${credit.number} from Seller Ltd`);
    expect(mail.text).toContain('As agreed on the phone');
    expect(mail.text).toContain(`It corrects invoice ${corrected.number}.`);
    expect(mail.text).toContain('Total 120.00 USD');
    expect(mail.text).not.toContain('/i/');
    expect(mail.html).toContain(`Credit note ${credit.number}`);
    expect(mail.html).not.toContain('href=');
    expect(mail.attachments).toHaveLength(1);
    const pdf = mail.attachments[0]!;
    expect(pdf).toMatchObject({
      contentType: 'application/pdf',
      filename: `credit-note-${credit.number}.pdf`,
    });
    expect(pdf.content.subarray(0, 5).toString()).toBe('%PDF-');
  });
});

describe('automatic reminders', () => {
  it('mails each stage once: three days before due, on due, a week after; not while paused or once paid', async () => {
    const port = (smtp.server.address() as AddressInfo).port;
    const clock = new ManualClock(new Date('2026-12-01T09:00:00Z'));
    const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, from: 'billing@tollbook.test' });
    const deps = { db: h.db, clock, publicUrl: 'http://localhost:8080', mailer };
    const client = `client-${Date.now()}@acme.test`;
    const { key, invoice: created } = await invoice({ client_email: client, due_on: '2026-12-10' });
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${created.id}/send`,
      key: key.key,
      payload: { via: 'none' },
    });
    const mails = () =>
      received.filter((item) => item.envelopeTo.includes(client)).map((item) => item.mail.text ?? '');
    const runAt = async (day: string) => {
      clock.set(new Date(`${day}T09:00:00Z`));
      await sendAutomaticReminders(deps);
      await deliver(h, key.spaceId, clock, mailer);
    };
    await runAt('2026-12-01');
    expect(mails()).toHaveLength(0);
    await runAt('2026-12-07');
    await runAt('2026-12-07');
    expect(mails()).toHaveLength(1);
    expect(mails()[0]).toContain('due in a few days');
    await runAt('2026-12-10');
    expect(mails()).toHaveLength(2);
    expect(mails()[1]).toContain('due today');
    await h.db
      .updateTable('invoices')
      .set({ reminders_paused_at: clock.now() })
      .where('id', '=', created.id)
      .execute();
    await runAt('2026-12-17');
    expect(mails()).toHaveLength(2);
    await h.db
      .updateTable('invoices')
      .set({ reminders_paused_at: null })
      .where('id', '=', created.id)
      .execute();
    await runAt('2026-12-18');
    await runAt('2026-12-25');
    expect(mails()).toHaveLength(3);
    expect(mails()[2]).toContain('overdue');
    const { key: other, invoice: paid } = await invoice({
      client_email: `paid-${client}`,
      due_on: '2026-12-26',
    });
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${paid.id}/send`,
      key: other.key,
      payload: { via: 'none' },
    });
    await h.inject({
      method: 'POST',
      url: `/integration/invoices/${paid.id}/payments`,
      key: other.key,
      payload: { amount: '240' },
    });
    await runAt('2026-12-26');
    expect(received.filter((item) => item.envelopeTo.includes(`paid-${client}`))).toHaveLength(0);
    mailer.close();
  });
});

describe('mail in development without SMTP_URL', () => {
  it('writes each message as an .eml file under DATA_DIR/mail, listed in the app API', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollbook-mail-'));
    const dev = await createHarness({ env: { DATA_DIR: dataDir } });
    try {
      const { key, owner, spaceId } = await dev.world({ scopes: ['invoices'] });
      const account = await dev.makeAccount(spaceId);
      const created = await dev.inject({
        method: 'POST',
        url: '/integration/invoices',
        key: key.key,
        payload: {
          account_id: account.id,
          client_name: 'Acme',
          client_email: 'ap@acme.test',
          due_on: '2027-01-31',
          line_items: [{ description: 'Work', unit_price: '10' }],
        },
      });
      const id = created.json().id as string;
      expect(
        (
          await dev.inject({
            method: 'POST',
            url: `/integration/invoices/${id}/send`,
            key: key.key,
            payload: {},
          })
        ).statusCode,
      ).toBe(200);
      expect(await deliver(dev, spaceId)).toBe(1);
      const listed = await dev.inject({
        method: 'GET',
        url: `/app/api/spaces/${spaceId}/invoice-deliveries?invoice_id=${id}`,
        session: owner.token,
      });
      expect(listed.statusCode, listed.body).toBe(200);
      const [delivery] = listed.json().items;
      expect(delivery).toMatchObject({
        invoice_id: id,
        purpose: 'send',
        via: ['email'],
        recipient: 'ap@acme.test',
      });
      expect(delivery.mail_file.startsWith(join(dataDir, 'mail'))).toBe(true);
      const mail = await simpleParser(readFileSync(delivery.mail_file));
      expect(mail.subject).toContain('Invoice');
      expect(mail.attachments[0]?.contentType).toBe('application/pdf');
    } finally {
      await dev.close();
    }
  });
});
