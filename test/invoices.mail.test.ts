import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.ts';

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
    expect(received).toHaveLength(before + 1);
    const { envelopeTo, mail } = received.at(-1)!;
    expect(envelopeTo.sort()).toEqual(['ap@acme.test', 'boss@acme.test']);
    expect(mail.subject).toBe(`Invoice ${created.number} from Seller Ltd`);
    expect(mail.from?.value[0]).toMatchObject({ name: 'Seller Ltd', address: 'billing@tollbook.test' });
    expect(mail.html).toContain('Acme &#60;GmbH&#62;');
    expect(mail.html).toContain(`href="${created.url}"`);
    expect(mail.text).toContain('Thanks for your business');
    expect(mail.text).toContain('Total 240 USD');
    expect(mail.attachments).toHaveLength(1);
    const pdf = mail.attachments[0]!;
    expect(pdf).toMatchObject({ contentType: 'application/pdf', filename: `invoice-${created.number}.pdf` });
    expect(pdf.content.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdf.content.length).toBeGreaterThan(1000);
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
    expect(received).toHaveLength(before + 1);
    expect(received.at(-1)!.mail.subject).toBe(`Reminder: invoice ${created.number} from Seller Ltd`);
  });

  it('refuses an invoice without a client email, and leaves it a draft when the server refuses the mail', async () => {
    const { key, invoice: created } = await invoice({ client_email: '' });
    const noAddress = await h.inject({
      method: 'POST',
      url: `/integration/invoices/${created.id}/send`,
      key: key.key,
      payload: {},
    });
    expect(noAddress.statusCode).toBe(422);
    expect(noAddress.json()).toMatchObject({ error: 'invalid_request', details: { field: 'to' } });
    refuse = true;
    try {
      const failed = await h.inject({
        method: 'POST',
        url: `/integration/invoices/${created.id}/send`,
        key: key.key,
        payload: { to: 'someone@acme.test' },
      });
      expect(failed.statusCode).toBe(502);
      expect(failed.json()).toMatchObject({ error: 'delivery_failed' });
    } finally {
      refuse = false;
    }
    const after = await h.inject({ method: 'GET', url: `/integration/invoices/${created.id}`, key: key.key });
    expect(after.json().status).toBe('draft');
  });
});
