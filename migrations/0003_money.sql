-- Money core: a double-entry ledger, endpoint cards (resources), payment requests and their
-- settlements, prepaid client credits and the charges against them.

-- A ledger account is anything money can be in or owed by: a user account's asset, an income
-- account per endpoint, a client's prepaid credit (owed to the client), opening equity, or a
-- clearing account between pegged currencies. Postings are signed: debits positive.
CREATE TABLE ledger_accounts (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('asset', 'income', 'client_credit', 'equity', 'clearing')),
  ref text NOT NULL,
  currency text NOT NULL,
  normal_side text NOT NULL CHECK (normal_side IN ('debit', 'credit')),
  -- Only accounts whose balance is read or constrained keep one; busy income accounts do not,
  -- so concurrent payments never queue on one row.
  tracks_balance boolean NOT NULL,
  no_overdraft boolean NOT NULL DEFAULT false,
  balance numeric NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  UNIQUE (space_id, kind, ref, currency),
  -- The no-overdraft rule, as the database's last word: a prepaid credit never goes below zero.
  CHECK (NOT no_overdraft OR (CASE WHEN normal_side = 'debit' THEN balance ELSE -balance END) >= 0),
  CHECK (tracks_balance OR NOT no_overdraft)
);

CREATE TABLE ledger_entries (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  origin text NOT NULL CHECK (origin IN ('rail', 'manual', 'import', 'internal')),
  kind text NOT NULL CHECK (kind IN ('income', 'expense', 'transfer')),
  occurred_on date NOT NULL,
  cause_type text NOT NULL,
  cause_id uuid,
  counterparty text NOT NULL DEFAULT '',
  memo text NOT NULL DEFAULT '',
  reverses_entry_id uuid REFERENCES ledger_entries (id),
  created_at timestamptz NOT NULL
);
CREATE INDEX ledger_entries_space_idx ON ledger_entries (space_id, created_at);
CREATE INDEX ledger_entries_cause_idx ON ledger_entries (space_id, cause_type, cause_id);
CREATE UNIQUE INDEX ledger_entries_one_reversal ON ledger_entries (reverses_entry_id) WHERE reverses_entry_id IS NOT NULL;

CREATE TABLE ledger_postings (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL,
  entry_id uuid NOT NULL REFERENCES ledger_entries (id) ON DELETE CASCADE,
  ledger_account_id uuid NOT NULL REFERENCES ledger_accounts (id) ON DELETE CASCADE,
  currency text NOT NULL,
  amount numeric NOT NULL CHECK (amount <> 0),
  occurred_on date NOT NULL
);
CREATE INDEX ledger_postings_entry_idx ON ledger_postings (entry_id);
CREATE INDEX ledger_postings_account_idx ON ledger_postings (ledger_account_id, occurred_on);

-- Every entry balances per currency, checked by the database at commit.
CREATE FUNCTION ledger_entry_balances() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (
    SELECT 1 FROM ledger_postings WHERE entry_id = NEW.entry_id
    GROUP BY currency HAVING SUM(amount) <> 0
  ) THEN
    RAISE EXCEPTION 'ledger entry % does not balance', NEW.entry_id USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER ledger_postings_balance
  AFTER INSERT ON ledger_postings DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION ledger_entry_balances();

-- Postings and entries are never edited: a correction is a new entry.
CREATE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger rows are append-only (%)', TG_TABLE_NAME USING ERRCODE = '55000';
END $$;
CREATE TRIGGER ledger_postings_append_only BEFORE UPDATE ON ledger_postings
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();

-- A user account's money lives in its asset ledger account; the cached column goes.
ALTER TABLE accounts ADD COLUMN ledger_account_id uuid REFERENCES ledger_accounts (id);
ALTER TABLE accounts DROP COLUMN balance;

-- An endpoint the seller charges for: the card on the Endpoints screen.
CREATE TABLE resources (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  address text NOT NULL,
  name text NOT NULL DEFAULT '',
  findable boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (space_id, address)
);

CREATE TABLE client_credits (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  client_ref text NOT NULL,
  currency text NOT NULL,
  ledger_account_id uuid NOT NULL REFERENCES ledger_accounts (id),
  contact_id uuid REFERENCES contacts (id),
  -- The balance page's address: needs no login, so it is a long random token.
  page_token text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  UNIQUE (space_id, client_ref, currency)
);

CREATE TABLE payment_requests (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  token text NOT NULL UNIQUE,
  account_id uuid NOT NULL REFERENCES accounts (id),
  key_id uuid REFERENCES integration_keys (id) ON DELETE SET NULL,
  purpose text NOT NULL CHECK (purpose IN ('sale', 'top_up')),
  client_credit_id uuid REFERENCES client_credits (id),
  amount numeric NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  amount_received numeric NOT NULL DEFAULT 0,
  status text NOT NULL CHECK (status IN ('active', 'paid', 'cancelled')),
  memo text NOT NULL DEFAULT '',
  resource_id uuid REFERENCES resources (id),
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  paid_at timestamptz,
  cancelled_at timestamptz,
  CHECK ((purpose = 'top_up') = (client_credit_id IS NOT NULL))
);
CREATE INDEX payment_requests_lapse_idx ON payment_requests (expires_at) WHERE status = 'active';
CREATE INDEX payment_requests_space_idx ON payment_requests (space_id, created_at);

-- Money that landed against a request. One rail reference settles once per space, whatever retries.
CREATE TABLE settlements (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  payment_request_id uuid NOT NULL REFERENCES payment_requests (id),
  rail text NOT NULL CHECK (rail IN ('x402', 'card', 'bank', 'chain', 'manual')),
  reference text NOT NULL,
  amount numeric NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  payer text NOT NULL DEFAULT '',
  entry_id uuid NOT NULL REFERENCES ledger_entries (id),
  settled_at timestamptz NOT NULL,
  UNIQUE (space_id, rail, reference)
);
CREATE INDEX settlements_request_idx ON settlements (payment_request_id);

CREATE TABLE charges (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  client_credit_id uuid NOT NULL REFERENCES client_credits (id),
  account_id uuid NOT NULL REFERENCES accounts (id),
  key_id uuid REFERENCES integration_keys (id) ON DELETE SET NULL,
  amount numeric NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  memo text NOT NULL DEFAULT '',
  resource_id uuid REFERENCES resources (id),
  entry_id uuid NOT NULL REFERENCES ledger_entries (id),
  created_at timestamptz NOT NULL
);
CREATE INDEX charges_credit_idx ON charges (client_credit_id, created_at);
