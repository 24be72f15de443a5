-- Mail leaves after the transaction that decided it commits. A row is one mail to deliver:
-- written in that transaction, sent by the mail worker outside any transaction, retried with
-- back-off while the outcome is a temporary refusal or unknown. message_id is the Message-ID
-- header of every attempt of this row, so a receiver can recognise a retry of the same mail.
CREATE TABLE mail_outbox (
  id uuid PRIMARY KEY,
  message_id text NOT NULL UNIQUE,
  space_id uuid REFERENCES spaces (id) ON DELETE CASCADE,
  recipient text NOT NULL CHECK (recipient <> ''),
  cc text[] NOT NULL DEFAULT '{}',
  from_name text NOT NULL DEFAULT '',
  subject text NOT NULL,
  body_text text NOT NULL,
  body_html text NOT NULL,
  -- The invoice whose PDF is attached, rendered by the worker when it sends.
  invoice_id uuid,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'given_up')),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at timestamptz NOT NULL,
  last_error text NOT NULL DEFAULT '',
  -- In development without SMTP_URL, where the .eml file was written.
  mail_file text,
  sent_at timestamptz,
  created_at timestamptz NOT NULL,
  CONSTRAINT mail_outbox_sent_has_time CHECK ((state = 'sent') = (sent_at IS NOT NULL)),
  CONSTRAINT mail_outbox_invoice_fkey FOREIGN KEY (space_id, invoice_id)
    REFERENCES invoices (space_id, id) ON DELETE CASCADE
);
CREATE INDEX mail_outbox_due_idx ON mail_outbox (next_attempt_at) WHERE state = 'pending';

-- An invoice's send or reminder by mail points at the mail that carries it.
ALTER TABLE invoice_deliveries ADD COLUMN mail_id uuid REFERENCES mail_outbox (id);
CREATE INDEX invoice_deliveries_mail_idx ON invoice_deliveries (mail_id) WHERE mail_id IS NOT NULL;
