import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import { invoiceMailAttachments } from '../src/features/invoices/index.ts';
import { createMailer, type Mailer } from '../src/platform/mail/mailer.ts';
import { drainMailOutbox, MAIL_ATTEMPTS_MAX } from '../src/platform/mail/outbox.ts';
import { type SmtpFault, startSmtpFault } from './fixtures/smtp-fault.ts';
import { createHarness, type Harness } from './harness.ts';
import { holdMailOutbox } from './support/turns.ts';

holdMailOutbox();

// Invoice mail leaves through the outbox after commit. With the mail server refusing, then
// silent, then back, the invoice and its deliveries agree at every step, and the client gets the
// mail exactly once, under the Message-ID the outbox row was given.

let h: Harness;
let smtp: SmtpFault;
let mailer: Mailer;
const clock = new ManualClock(new Date('2026-11-01T09:00:00Z'));

beforeAll(async () => {
  smtp = await startSmtpFault('refuse-421');
  h = await createHarness({
    clock,
    env: { SMTP_URL: smtp.url, MAIL_FROM: 'Billing <billing@tollbook.test>' },
  });
  // The worker's own mailer, with a silence bound short enough for the `hang` step to end soon and
  // long enough that a busy machine's slow but working server is not taken for a silent one.
  mailer = createMailer({ smtpUrl: smtp.url, from: 'Billing <billing@tollbook.test>', timeoutMs: 5_000 });
}, 180_000);
afterAll(async () => {
  mailer?.close();
  await h?.close();
  await smtp?.close();
});

const deliver = (spaceId: string) =>
  drainMailOutbox(
    {
      db: h.db,
      clock,
      mailer,
      attachmentsFor: ({ spaceId: space, invoiceId }) =>
        invoiceMailAttachments(h.db, h.deps.config.publicUrl, space, invoiceId),
    },
    { spaceIds: [spaceId] },
  );

async function sentInvoice(email: string) {
  const { key } = await h.world({ scopes: ['invoices'] });
  const account = await h.makeAccount(key.spaceId);
  const created = await h.inject({
    method: 'POST',
    url: '/integration/invoices',
    key: key.key,
    payload: {
      account_id: account.id,
      client_name: 'Acme',
      client_email: email,
      due_on: '2026-12-31',
      line_items: [{ description: 'Work', unit_price: '100' }],
    },
  });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().id as string;
  const sent = await h.inject({
    method: 'POST',
    url: `/integration/invoices/${id}/send`,
    key: key.key,
    payload: {},
  });
  expect(sent.statusCode, sent.body).toBe(200);
  expect(sent.json().status).toBe('sent');
  return { spaceId: key.spaceId, id };
}

/** The invoice, its send delivery and the delivery's mail, read together. */
async function books(id: string) {
  const invoice = await h.db
    .selectFrom('invoices')
    .select('status')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  const deliveries = await h.db
    .selectFrom('invoice_deliveries as d')
    .innerJoin('mail_outbox as m', 'm.id', 'd.mail_id')
    .select(['d.purpose', 'd.via', 'm.state', 'm.attempts', 'm.message_id', 'm.last_error'])
    .where('d.invoice_id', '=', id)
    .execute();
  return { status: invoice.status, deliveries };
}

describe('invoice mail while the mail server is down', () => {
  it('records the send at once, retries through refusals and silence, and delivers once when the server is back', async () => {
    const email = 'ap-down@acme.test';
    const { spaceId, id } = await sentInvoice(email);
    const mailFor = () => smtp.received.filter((item) => item.envelopeTo.includes(email));

    const steps: { mode: SmtpFault['mode']; state: string }[] = [
      { mode: 'refuse-421', state: 'pending' },
      { mode: 'refuse-451', state: 'pending' },
      { mode: 'hang', state: 'pending' },
      { mode: 'accept', state: 'sent' },
    ];
    let attempts = 0;
    for (const step of steps) {
      smtp.mode = step.mode;
      await deliver(spaceId);
      attempts += 1;
      const now = await books(id);
      // The invoice is sent and has exactly one send delivery, whatever the mail server does.
      expect(now.status).toBe('sent');
      expect(now.deliveries).toHaveLength(1);
      expect(now.deliveries[0]).toMatchObject({
        purpose: 'send',
        via: ['email'],
        state: step.state,
        attempts,
      });
      if (step.state === 'pending') {
        expect(mailFor()).toHaveLength(0);
        // Not due again until its back-off has passed.
        expect(await deliver(spaceId)).toBe(0);
        clock.advance(4 * 60 * 60_000);
      }
    }
    expect(mailFor()).toHaveLength(1);
    const { message_id: messageId } = (await books(id)).deliveries[0]!;
    expect(mailFor()[0]!.mail.messageId).toBe(messageId);
    expect(mailFor()[0]!.mail.attachments[0]?.contentType).toBe('application/pdf');
    // Nothing more leaves, however long we wait.
    clock.advance(24 * 60 * 60_000);
    expect(await deliver(spaceId)).toBe(0);
    expect(mailFor()).toHaveLength(1);
  }, 60_000);

  it('gives a mail up at once on a definite refusal (5xx), and after its last attempt on temporary ones', async () => {
    smtp.mode = 'reject-550';
    const refused = await sentInvoice('ap-rejected@acme.test');
    await deliver(refused.spaceId);
    expect((await books(refused.id)).deliveries[0]).toMatchObject({ state: 'given_up', attempts: 1 });

    smtp.mode = 'refuse-451';
    const flaky = await sentInvoice('ap-flaky@acme.test');
    for (let attempt = 1; attempt <= MAIL_ATTEMPTS_MAX; attempt += 1) {
      await deliver(flaky.spaceId);
      clock.advance(4 * 60 * 60_000);
    }
    const last = (await books(flaky.id)).deliveries[0]!;
    expect(last).toMatchObject({ state: 'given_up', attempts: MAIL_ATTEMPTS_MAX });
    expect(last.last_error).toContain('451');
    expect((await books(flaky.id)).status).toBe('sent');
  }, 60_000);

  it('refuses to send mail from inside a database transaction (a bug, caught by the first test on that path)', async () => {
    smtp.mode = 'accept';
    const before = smtp.attempts;
    await expect(
      h.db
        .transaction()
        .execute(() => mailer.send({ to: 'x@acme.test', subject: 's', text: 't', html: '<p>t</p>' })),
    ).rejects.toThrow(/the mailer was called inside a database transaction/);
    expect(smtp.attempts).toBe(before);
    await mailer.send({ to: 'x@acme.test', subject: 's', text: 't', html: '<p>t</p>' });
    expect(smtp.attempts).toBe(before + 1);
  });
});
