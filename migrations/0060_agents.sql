-- Issue 19: agents. An owner or admin issues an agent an oat_ token; the agent acts in one
-- space inside a fence (x402 hosts, allowed merchants, USD caps per request and per day, an
-- expiry) with a set of perms. Each of its writes is applied, or kept as a proposal a person
-- approves or rejects in the app.

-- An automated agent of a space: who issued it, the hash of its token, its status, its fence
-- and perms, and its own hot wallet (the key sealed under the master key, never shown).
CREATE TABLE agents (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  issuer_user_id uuid NOT NULL REFERENCES users (id),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 120),
  token_hash text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  prefix text NOT NULL,
  status text NOT NULL CHECK (status IN ('observing', 'active', 'frozen')),
  perms text[] NOT NULL
    CHECK (perms <@ ARRAY['payments', 'transactions', 'chain_payments', 'wallet', 'x402', 'cards']::text[]),
  -- True when the agent may touch only the accounts listed in agent_accounts.
  accounts_restricted boolean NOT NULL DEFAULT false,
  x402_hosts text[] NOT NULL DEFAULT '{}',
  allowed_merchants text[] NOT NULL DEFAULT '{}',
  per_request_usd numeric NOT NULL CHECK (per_request_usd >= 0),
  daily_usd numeric NOT NULL CHECK (daily_usd >= 0),
  -- Past this moment nothing is inside the fence: every write becomes a proposal.
  fence_expires_at timestamptz,
  wallet_address text NOT NULL UNIQUE CHECK (wallet_address ~ '^0x[0-9a-f]{40}$'),
  wallet_key_sealed text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  revoked_at timestamptz,
  CONSTRAINT agents_space_id_id_key UNIQUE (space_id, id)
);
CREATE INDEX agents_space_idx ON agents (space_id, created_at);

-- An account a restricted agent may use (same space as the agent and the account).
CREATE TABLE agent_accounts (
  space_id uuid NOT NULL,
  agent_id uuid NOT NULL,
  account_id uuid NOT NULL,
  PRIMARY KEY (agent_id, account_id),
  CONSTRAINT agent_accounts_agent_fkey FOREIGN KEY (space_id, agent_id) REFERENCES agents (space_id, id),
  CONSTRAINT agent_accounts_account_fkey FOREIGN KEY (space_id, account_id) REFERENCES accounts (space_id, id)
);

-- A category a book row can carry (expense, income or transfer), named once per kind in a space.
CREATE TABLE categories (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 80),
  kind text NOT NULL CHECK (kind IN ('income', 'expense', 'transfer')),
  created_at timestamptz NOT NULL,
  CONSTRAINT categories_space_id_id_key UNIQUE (space_id, id),
  UNIQUE (space_id, kind, name)
);

-- One write an agent asked for: what it asked (input), the rule table's outcome, and, for a
-- proposal, what a person decided. `outcome` applied = done at once; proposed = waits in the
-- app (then approved, rejected or lapsed after seven days).
CREATE TABLE agent_writes (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL,
  agent_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('payment', 'transaction', 'transaction_patch', 'chain_payment',
    'wallet_transfer', 'x402', 'grant_change', 'card_intent')),
  input jsonb NOT NULL,
  -- Why it became a proposal: the fence it met, or the observing status.
  message text NOT NULL DEFAULT '',
  -- sending: a wallet transfer reserved under the cap and on its way to the chain; failed: the
  -- chain refused it (its reservation is released).
  status text NOT NULL CHECK (status IN ('applied', 'pending', 'approved', 'rejected', 'lapsed', 'sending', 'failed')),
  -- The Idempotency-Key the agent sent, with the hash of the body it came with.
  idempotency_key text CHECK (idempotency_key IS NULL OR idempotency_key ~ '^[\x21-\x7e]{1,255}$'),
  request_hash text,
  result jsonb,
  decided_by uuid REFERENCES users (id),
  decided_at timestamptz,
  reject_reason text CHECK (reject_reason IS NULL OR char_length(reject_reason) <= 500),
  created_at timestamptz NOT NULL,
  CONSTRAINT agent_writes_agent_fkey FOREIGN KEY (space_id, agent_id) REFERENCES agents (space_id, id),
  CONSTRAINT agent_writes_space_id_id_key UNIQUE (space_id, id),
  -- A decided proposal names who decided and when; a lapse is decided by nobody.
  CHECK ((status IN ('approved', 'rejected')) = (decided_by IS NOT NULL)),
  CHECK ((status IN ('applied', 'pending', 'sending', 'failed')) = (decided_at IS NULL)),
  CHECK ((idempotency_key IS NULL) = (request_hash IS NULL)),
  UNIQUE (agent_id, idempotency_key),
  CHECK ((status = 'rejected') = (reject_reason IS NOT NULL))
);
CREATE INDEX agent_writes_space_idx ON agent_writes (space_id, created_at);
CREATE INDEX agent_writes_pending_idx ON agent_writes (created_at) WHERE status = 'pending';

-- Money an agent's applied writes spent, in USD, counted against its daily cap (UTC days).
CREATE TABLE agent_spend (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL,
  agent_id uuid NOT NULL,
  write_id uuid NOT NULL,
  amount_usd numeric NOT NULL CHECK (amount_usd > 0),
  spent_at timestamptz NOT NULL,
  CONSTRAINT agent_spend_agent_fkey FOREIGN KEY (space_id, agent_id) REFERENCES agents (space_id, id),
  CONSTRAINT agent_spend_write_fkey FOREIGN KEY (space_id, write_id) REFERENCES agent_writes (space_id, id)
);
CREATE INDEX agent_spend_day_idx ON agent_spend (agent_id, spent_at);

-- A book row an agent filed (or an approved proposal of one): the ledger entry stays
-- append-only, so the fields a correction may change (category, note, payee) live here.
CREATE TABLE agent_book_rows (
  space_id uuid NOT NULL,
  entry_id uuid NOT NULL,
  agent_id uuid NOT NULL,
  account_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('income', 'expense')),
  category_id uuid,
  note text NOT NULL DEFAULT '' CHECK (char_length(note) <= 500),
  payee text NOT NULL DEFAULT '' CHECK (char_length(payee) <= 200),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (entry_id),
  CONSTRAINT agent_book_rows_entry_fkey FOREIGN KEY (space_id, entry_id) REFERENCES ledger_entries (space_id, id),
  CONSTRAINT agent_book_rows_agent_fkey FOREIGN KEY (space_id, agent_id) REFERENCES agents (space_id, id),
  CONSTRAINT agent_book_rows_account_fkey FOREIGN KEY (space_id, account_id) REFERENCES accounts (space_id, id),
  CONSTRAINT agent_book_rows_category_fkey FOREIGN KEY (space_id, category_id) REFERENCES categories (space_id, id)
);

-- A card payment an agent declared before its card pays: the merchant, what for, and the most it
-- may cost (USD). An expense row the agents book later whose payee is the merchant is matched to
-- the oldest open intent; over the ceiling, the space's owners and admins are notified.
CREATE TABLE card_intents (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL,
  agent_id uuid NOT NULL,
  merchant text NOT NULL CHECK (char_length(merchant) BETWEEN 2 AND 120),
  purpose text NOT NULL CHECK (char_length(purpose) BETWEEN 1 AND 200),
  ceiling_usd numeric NOT NULL CHECK (ceiling_usd > 0 AND ceiling_usd <= 100000),
  kind text NOT NULL CHECK (kind IN ('one_off', 'recurring')),
  period text CHECK (period IN ('month', 'year')),
  months integer CHECK (months BETWEEN 1 AND 12),
  category_id uuid,
  -- open: waits for its row (a recurring intent stays open); matched: a one-off that found it;
  -- expired: past expires_at before any row.
  status text NOT NULL CHECK (status IN ('open', 'matched', 'expired')),
  expires_at timestamptz,
  created_at timestamptz NOT NULL,
  CONSTRAINT card_intents_space_id_id_key UNIQUE (space_id, id),
  CONSTRAINT card_intents_agent_fkey FOREIGN KEY (space_id, agent_id) REFERENCES agents (space_id, id),
  CONSTRAINT card_intents_category_fkey FOREIGN KEY (space_id, category_id) REFERENCES categories (space_id, id)
);
CREATE INDEX card_intents_open_idx ON card_intents (space_id, lower(merchant)) WHERE status = 'open';

-- A book row matched to a card intent, and whether it stayed within the ceiling.
CREATE TABLE card_intent_matches (
  space_id uuid NOT NULL,
  intent_id uuid NOT NULL,
  entry_id uuid NOT NULL,
  amount numeric NOT NULL CHECK (amount > 0),
  within_ceiling boolean NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (entry_id),
  CONSTRAINT card_intent_matches_intent_fkey FOREIGN KEY (space_id, intent_id) REFERENCES card_intents (space_id, id),
  CONSTRAINT card_intent_matches_entry_fkey FOREIGN KEY (space_id, entry_id) REFERENCES ledger_entries (space_id, id)
);
