import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type { Config } from '../config.ts';

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
  fromName?: string;
};

export type SentMail = { messageId: string; transport: 'smtp' | 'file'; file?: string };

export type Mailer = {
  available: boolean;
  send(message: MailMessage): Promise<SentMail>;
  close(): void;
};

export type MailerOptions = { smtpUrl?: string | undefined; from: string; fileDir?: string | undefined };

function fromHeader(options: MailerOptions, name?: string) {
  // "Name <address>": the address between the first < and the > after it.
  const open = options.from.indexOf('<');
  const close = open < 0 ? -1 : options.from.indexOf('>', open + 2);
  const address = close < 0 ? options.from : options.from.slice(open + 1, close);
  return name ? { name, address } : options.from;
}

export function createMailer(options: MailerOptions): Mailer {
  if (options.smtpUrl) {
    const transport = nodemailer.createTransport(options.smtpUrl);
    return {
      available: true,
      async send(message) {
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
      async send(message) {
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
    send: () => Promise.reject(new Error('No mail transport is configured (SMTP_URL).')),
    close: () => {},
  };
}

/** The server's mailer: SMTP_URL, else .eml files under DATA_DIR/mail in development, else none. */
export function mailerFromConfig(config: Config): Mailer {
  const onDisk = !config.production && !config.dataDir.startsWith('memory://');
  return createMailer({
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    fileDir: onDisk ? join(config.dataDir, 'mail') : undefined,
  });
}
