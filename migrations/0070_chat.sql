-- Chat (Telegram): a client's group connected to a contact through the service's bot, what the
-- client says and sends there, and the client's answers to invoices posted in it.

-- A single-use code that connects a chat group to a contact (POST …/telegram-link). Only a
-- SHA-256 of the code is kept; it lives 24 hours and is spent by the first /link that names it.
CREATE TABLE chat_link_codes (
  code_hash text PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  contact_id uuid NOT NULL,
  -- The key that minted the code: its webhook address hears what the client says in the group.
  key_id uuid REFERENCES integration_keys (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  CHECK (expires_at > created_at),
  CHECK (used_at IS NULL OR used_at >= created_at),
  CONSTRAINT chat_link_codes_contact_fkey FOREIGN KEY (space_id, contact_id)
    REFERENCES contacts (space_id, id) ON DELETE CASCADE
);
CREATE INDEX chat_link_codes_expiry_idx ON chat_link_codes (expires_at);

-- A chat group connected to a contact. A contact has at most one live group (a second /link
-- replaces the first) and a group serves one contact at a time; a row that ended keeps why.
CREATE TABLE contact_chats (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  contact_id uuid NOT NULL,
  key_id uuid REFERENCES integration_keys (id) ON DELETE SET NULL,
  -- Telegram's chat id, kept as its decimal text (groups have negative ids).
  telegram_chat_id text NOT NULL CHECK (telegram_chat_id ~ '^-?[0-9]{1,20}$'),
  title text NOT NULL CHECK (char_length(title) <= 255),
  connected_at timestamptz NOT NULL,
  disconnected_at timestamptz,
  disconnect_reason text CHECK (disconnect_reason IN ('replaced', 'bot_removed')),
  CHECK ((disconnected_at IS NULL) = (disconnect_reason IS NULL)),
  CONSTRAINT contact_chats_space_id_id_key UNIQUE (space_id, id),
  CONSTRAINT contact_chats_contact_fkey FOREIGN KEY (space_id, contact_id)
    REFERENCES contacts (space_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX contact_chats_live_contact ON contact_chats (space_id, contact_id)
  WHERE disconnected_at IS NULL;
CREATE UNIQUE INDEX contact_chats_live_group ON contact_chats (telegram_chat_id)
  WHERE disconnected_at IS NULL;

-- What the client wrote or dropped in a connected group (in), and what the seller answered
-- from the app (out). A file's bytes live in the data directory's file store under the
-- contact, named by their SHA-256; the row says what they are.
CREATE TABLE chat_messages (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  contact_id uuid NOT NULL,
  chat_id uuid NOT NULL,
  direction text NOT NULL CHECK (direction IN ('in', 'out')),
  kind text NOT NULL CHECK (kind IN ('text', 'file')),
  -- Telegram's own limit on a message (4096 characters), kept as sent.
  text text NOT NULL DEFAULT '' CHECK (char_length(text) <= 4096),
  author text NOT NULL DEFAULT '' CHECK (char_length(author) <= 200),
  author_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  telegram_message_id text CHECK (telegram_message_id ~ '^[0-9]{1,20}$'),
  file_name text CHECK (char_length(file_name) <= 255),
  file_size integer CHECK (file_size BETWEEN 0 AND 20971520),
  content_type text CHECK (char_length(content_type) <= 100),
  file_sha256 text CHECK (file_sha256 ~ '^[0-9a-f]{64}$'),
  created_at timestamptz NOT NULL,
  CHECK ((kind = 'file') = (file_sha256 IS NOT NULL AND file_name IS NOT NULL
    AND file_size IS NOT NULL AND content_type IS NOT NULL)),
  CHECK (kind = 'text' OR direction = 'in'),
  CONSTRAINT chat_messages_space_id_id_key UNIQUE (space_id, id),
  CONSTRAINT chat_messages_contact_fkey FOREIGN KEY (space_id, contact_id)
    REFERENCES contacts (space_id, id) ON DELETE CASCADE,
  CONSTRAINT chat_messages_chat_fkey FOREIGN KEY (space_id, chat_id)
    REFERENCES contact_chats (space_id, id) ON DELETE CASCADE
);
CREATE INDEX chat_messages_contact_idx ON chat_messages (space_id, contact_id, created_at);

-- Bot updates already taken by a server process: with several processes on one database an
-- update Telegram delivers twice (a retried webhook, a replay) is handled once.
CREATE TABLE telegram_updates (
  update_id bigint PRIMARY KEY,
  claimed_at timestamptz NOT NULL
);
CREATE INDEX telegram_updates_claimed_idx ON telegram_updates (claimed_at);

-- The client's answers to an invoice posted in chat. payer_marked_paid_at: the client pressed
-- "I paid" (nothing is booked until a person confirms). promised_on: the due date the client
-- asked for with "Need more time"; deferral_state says whether the seller has decided.
-- delivered_in_app: the invoice was posted to the client's chat group.
ALTER TABLE invoices
  ADD COLUMN payer_marked_paid_at timestamptz,
  ADD COLUMN promised_on date,
  ADD COLUMN deferral_state text CHECK (deferral_state IN ('requested', 'accepted', 'declined')),
  ADD COLUMN delivered_in_app boolean NOT NULL DEFAULT false,
  ADD CONSTRAINT invoices_deferral_check CHECK (deferral_state IS NULL OR deferral_state = 'declined'
    OR promised_on IS NOT NULL);
