-- An invoice posted to its client's chat group leaves after the transaction that decided it
-- commits, like mail. A row is one post to make (the invoice's PDF with its buttons, after the
-- seller's message when there is one): written with the send or reminder, posted by the chat
-- worker outside any transaction, retried with back-off while Telegram's answer is unknown.
CREATE TABLE invoice_chat_posts (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  invoice_id uuid NOT NULL,
  -- The contact whose group gets the post (the invoice's contact when it was decided).
  contact_id uuid NOT NULL,
  purpose text NOT NULL CHECK (purpose IN ('send', 'remind')),
  message text NOT NULL DEFAULT '',
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'given_up')),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at timestamptz NOT NULL,
  last_error text NOT NULL DEFAULT '',
  sent_at timestamptz,
  created_at timestamptz NOT NULL,
  UNIQUE (space_id, id),
  CONSTRAINT invoice_chat_posts_sent_has_time CHECK ((state = 'sent') = (sent_at IS NOT NULL)),
  CONSTRAINT invoice_chat_posts_invoice_fkey FOREIGN KEY (space_id, invoice_id)
    REFERENCES invoices (space_id, id) ON DELETE CASCADE,
  CONSTRAINT invoice_chat_posts_contact_fkey FOREIGN KEY (space_id, contact_id)
    REFERENCES contacts (space_id, id) ON DELETE CASCADE
);
CREATE INDEX invoice_chat_posts_due_idx ON invoice_chat_posts (next_attempt_at) WHERE state = 'pending';
CREATE INDEX invoice_chat_posts_invoice_idx ON invoice_chat_posts (space_id, invoice_id);

-- An invoice's send or reminder by chat points at the post that carries it.
ALTER TABLE invoice_deliveries ADD COLUMN chat_post_id uuid;
ALTER TABLE invoice_deliveries ADD CONSTRAINT invoice_deliveries_chat_post_fkey
  FOREIGN KEY (space_id, chat_post_id) REFERENCES invoice_chat_posts (space_id, id);
CREATE INDEX invoice_deliveries_chat_post_idx ON invoice_deliveries (chat_post_id)
  WHERE chat_post_id IS NOT NULL;
