import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { refuseInsideTransaction } from '../db/transaction-guard.ts';

// Outgoing mail. With SMTP_URL it goes to that server through nodemailer; in development without
// it, each message is written as an .eml file under DATA_DIR/mail (or the system's temporary
// directory for an in-memory database), so nothing is lost and it can be opened in a mail client.
// Production without SMTP_URL has no mail: senders answer that delivery is unavailable.

export type MailMessage = {
  to: string;
  cc?: string[];
  subject: string;
  text: string;
  html: string;
  attachments?: { filename: string; content: Buffer; contentType: string }[];
  /** Shown as the sender's name; the address is MAIL_FROM's. */
  fromName?: string | undefined;
  /** The Message-ID header, `<unique@domain>`: the same on every attempt of one mail. */
  messageId?: string | undefined;
};

export type SentMail = { messageId: string; transport: 'smtp' | 'file'; file?: string };

export type Mailer = {
  available: boolean;
  /** MAIL_FROM: the sender of every mail, whose domain names each Message-ID. */
  from: string;
  send(message: MailMessage): Promise<SentMail>;
  close(): void;
};

export type MailerOptions = {
  smtpUrl?: string | undefined;
  from: string;
  fileDir?: string | undefined;
  /** Bounds on each SMTP step (connect, greeting, any silence mid-conversation). */
  timeoutMs?: number | undefined;
  /** Where a transport's own `error` events are reported. */
  onTransportError?: ((error: Error) => void) | undefined;
};

const SMTP_TIMEOUT_MS = 30_000;

function fromHeader(options: MailerOptions, name?: string) {
  // "Name <address>": the address between the first < and the > after it.
  const open = options.from.indexOf('<');
  const close = open < 0 ? -1 : options.from.indexOf('>', open + 2);
  const address = close < 0 ? options.from : options.from.slice(open + 1, close);
  return name ? { name, address } : options.from;
}

export function createMailer(options: MailerOptions): Mailer {
  if (options.smtpUrl) {
    const timeoutMs = options.timeoutMs ?? SMTP_TIMEOUT_MS;
    // A server that accepts and then says nothing ends the attempt after timeoutMs (unknown
    // outcome, retried under the same Message-ID), instead of holding it for nodemailer's minutes.
    const transport = nodemailer.createTransport({
      url: options.smtpUrl,
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    } as Parameters<typeof nodemailer.createTransport>[0]);
    transport.on('error', options.onTransportError ?? (() => {}));
    return {
      available: true,
      from: options.from,
      async send(message) {
        refuseInsideTransaction('the mailer');
        const info = await transport.sendMail({ ...message, from: fromHeader(options, message.fromName) });
        return { messageId: info.messageId, transport: 'smtp' };
      },
      close: () => transport.close(),
    };
  }
  if (options.fileDir) {
    const dir = options.fileDir;
    const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
    return {
      available: true,
      from: options.from,
      async send(message) {
        refuseInsideTransaction('the mailer');
        const info = await transport.sendMail({ ...message, from: fromHeader(options, message.fromName) });
        mkdirSync(dir, { recursive: true });
        const file = join(
          dir,
          `${new Date().toISOString().replace(/[:.]/g, '-')}-${info.messageId.replace(/[^\w.-]/g, '')}.eml`,
        );
        writeFileSync(file, info.message as Buffer);
        return { messageId: info.messageId, transport: 'file', file };
      },
      close: () => transport.close(),
    };
  }
  return {
    available: false,
    from: options.from,
    send: () => Promise.reject(new Error('No mail transport is configured (SMTP_URL).')),
    close: () => {},
  };
}

/** The server's mailer: SMTP_URL, else .eml files under DATA_DIR/mail in development, else none. */
export function mailerFromConfig(config: Config, logger?: Logger): Mailer {
  const onDisk = !config.production && !config.dataDir.startsWith('memory://');
  return createMailer({
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    fileDir: onDisk ? join(config.dataDir, 'mail') : undefined,
    onTransportError: (error) => logger?.warn({ err: error }, 'the mail transport reported an error'),
  });
}
