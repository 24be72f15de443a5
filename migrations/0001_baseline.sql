-- Tollbook's data model, read top to bottom.
--
-- Every table that holds a space's data carries space_id. A row that points at another row of
-- the same space says so with a composite foreign key (space_id, x_id) -> x (space_id, id), so the
-- database itself refuses a reference into another space; a posting's reference to its ledger
-- account carries the currency too, so it also refuses a posting in another currency. Rules a
-- constraint can state are constraints (FOREIGN KEY, CHECK, UNIQUE, NOT NULL). PL/pgSQL appears
-- twice only: the one rule no constraint can state (an entry's postings balance per currency)
-- and the refusal to change or delete ledger rows (the ledger is append-only).
--
-- Spaces are never deleted: every reference to a space is a plain foreign key with no cascade,
-- so deleting a space that holds anything is refused.
--
-- Money is NUMERIC, read as text and parsed by core/money.ts (10^-8 units). Times are timestamptz;
-- calendar dates are date.

-- ============================================================================================
-- People and spaces
-- ============================================================================================

-- A person who can sign in. The address is unique whatever its letter case.
CREATE TABLE users (
  id uuid PRIMARY KEY,
  email text NOT NULL,
  name text NOT NULL,
  password_hash text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

-- A signed-in browser: the cookie's token is stored hashed, with its CSRF token.
CREATE TABLE sessions (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  csrf_token text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX sessions_user_idx ON sessions (user_id);

-- A space: one set of books (the spec's "book") with its plan and switches.
CREATE TABLE spaces (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  base_currency text NOT NULL,
  plan text NOT NULL CHECK (plan IN ('free', 'starter', 'pro', 'scale', 'enterprise')),
  subscription_packs integer NOT NULL DEFAULT 0 CHECK (subscription_packs >= 0),
  integration_enabled boolean NOT NULL DEFAULT true,
  payments_enabled boolean NOT NULL DEFAULT true,
  public_handle text NOT NULL,
  -- Bumped in the same transaction as any change that can stop a key (revocation, a member's
  -- role or removal, a rollout switch); processes that cache keys compare against it.
  auth_version integer NOT NULL DEFAULT 1,
  -- Books are closed through this date: rows dated on or before it are never filed.
  closed_through date,
  created_at timestamptz NOT NULL
);

-- A person's role in a space.
CREATE TABLE members (
  space_id uuid NOT NULL REFERENCES spaces (id),
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (space_id, user_id)
);
CREATE INDEX members_user_idx ON members (user_id);

-- Something a person should see in the app (a key about to expire, ...), once per subject.
CREATE TABLE notifications (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kind text NOT NULL,
  subject_id uuid,
  payload jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL,
  read_at timestamptz,
  UNIQUE (space_id, user_id, kind, subject_id)
);

-- ============================================================================================
-- Integration keys and the request machinery
-- ============================================================================================

-- Another system that pushes rows into a space (named by the key that pushes).
CREATE TABLE push_sources (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  name text NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (space_id, name),
  UNIQUE (space_id, id)
);

-- An API key of a space: stored hashed, with its scopes and its webhook address.
CREATE TABLE integration_keys (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  issuer_user_id uuid NOT NULL REFERENCES users (id),
  name text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  scopes text[] NOT NULL,
  webhook_url text,
  webhook_secret_sealed text NOT NULL,
  push_source_id uuid,
  created_at timestamptz NOT NULL,
  expires_at timestamptz,
  revoked_at timestamptz,
  expiry_reminded_at timestamptz,
  CONSTRAINT integration_keys_push_source_id_fkey FOREIGN KEY (space_id, push_source_id)
    REFERENCES push_sources (space_id, id)
);
CREATE INDEX integration_keys_space_idx ON integration_keys (space_id);
CREATE INDEX integration_keys_expiry_idx ON integration_keys (expires_at)
  WHERE revoked_at IS NULL AND expiry_reminded_at IS NULL AND expires_at IS NOT NULL;

-- A write call's idempotency key and, once done, its stored answer.
CREATE TABLE idempotency_records (
  space_id uuid NOT NULL,
  key_id uuid NOT NULL,
  route text NOT NULL,
  idempotency_key text NOT NULL,
  request_hash text NOT NULL,
  state text NOT NULL CHECK (state IN ('running', 'done')),
  owner_token uuid NOT NULL,
  locked_until timestamptz NOT NULL,
  response_status integer,
  response_body text,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (key_id, route, idempotency_key)
);
CREATE INDEX idempotency_records_expiry_idx ON idempotency_records (expires_at);

-- Calls per key in ten-second buckets; the limiter sums the buckets of the last minute.
CREATE TABLE rate_buckets (
  key_id uuid NOT NULL,
  bucket_start integer NOT NULL,
  hits integer NOT NULL,
  PRIMARY KEY (key_id, bucket_start)
);

-- ============================================================================================
-- The ledger: double entry, append-only
-- ============================================================================================

-- Anything money can be in or owed by: a user account's asset, an income account per endpoint,
-- a client's prepaid credit (owed to the client), an expense, opening equity, or a clearing
-- account between pegged currencies. Postings are signed: debits positive.
CREATE TABLE ledger_accounts (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  kind text NOT NULL CHECK (kind IN ('asset', 'income', 'expense', 'client_credit', 'equity', 'clearing')),
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
  -- What a posting names: an account of its own space, in its own currency.
  CONSTRAINT ledger_accounts_space_id_id_currency_key UNIQUE (space_id, id, currency),
  -- The no-overdraft rule, as the database's last word: a prepaid credit never goes below zero.
  CHECK (NOT no_overdraft OR (CASE WHEN normal_side = 'debit' THEN balance ELSE -balance END) >= 0),
  CHECK (tracks_balance OR NOT no_overdraft)
);

-- One booking: a set of postings that sum to zero per currency. A reversal is a new entry that
-- names the entry it reverses (in its own space; at most one reversal each).
CREATE TABLE ledger_entries (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  origin text NOT NULL CHECK (origin IN ('rail', 'manual', 'import', 'internal')),
  kind text NOT NULL CHECK (kind IN ('income', 'expense', 'transfer')),
  occurred_on date NOT NULL,
  cause_type text NOT NULL,
  cause_id uuid,
  counterparty text NOT NULL DEFAULT '',
  memo text NOT NULL DEFAULT '',
  reverses_entry_id uuid,
  created_at timestamptz NOT NULL,
  CONSTRAINT ledger_entries_space_id_id_key UNIQUE (space_id, id),
  CONSTRAINT ledger_entries_reverses_entry_id_fkey FOREIGN KEY (space_id, reverses_entry_id)
    REFERENCES ledger_entries (space_id, id)
);
CREATE INDEX ledger_entries_space_idx ON ledger_entries (space_id, created_at);
-- Entries are found by their cause only when they have one (pushed rows have none).
CREATE INDEX ledger_entries_cause_idx ON ledger_entries (space_id, cause_type, cause_id) WHERE cause_id IS NOT NULL;
CREATE UNIQUE INDEX ledger_entries_one_reversal ON ledger_entries (reverses_entry_id) WHERE reverses_entry_id IS NOT NULL;

-- One line of an entry: an amount moved on one ledger account. The entry and the account are
-- of the posting's own space, and the account is in the posting's currency.
CREATE TABLE ledger_postings (
  id uuid NOT NULL,
  space_id uuid NOT NULL,
  entry_id uuid NOT NULL,
  ledger_account_id uuid NOT NULL,
  currency text NOT NULL,
  amount numeric NOT NULL CHECK (amount <> 0),
  occurred_on date NOT NULL,
  -- Postings are always read by their entry: the entry id leads the key.
  PRIMARY KEY (entry_id, id),
  CONSTRAINT ledger_postings_entry_id_fkey FOREIGN KEY (space_id, entry_id)
    REFERENCES ledger_entries (space_id, id),
  CONSTRAINT ledger_postings_ledger_account_id_fkey FOREIGN KEY (space_id, ledger_account_id, currency)
    REFERENCES ledger_accounts (space_id, id, currency)
);
CREATE INDEX ledger_postings_account_idx ON ledger_postings (ledger_account_id, occurred_on);

-- The one rule no constraint states: an entry balances per currency. Every entry's postings
-- are written by one statement, an entry's earlier postings balanced when they were filed, so
-- the entry balances exactly when this statement's postings for it sum to zero per currency.
-- The check reads only the statement's own rows.
CREATE FUNCTION ledger_entries_balance() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  offender uuid;
BEGIN
  SELECT entry_id INTO offender FROM new_postings
  GROUP BY entry_id, currency HAVING SUM(amount) <> 0 LIMIT 1;
  IF offender IS NOT NULL THEN
    RAISE EXCEPTION 'ledger entry % does not balance', offender USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER ledger_postings_balance
  AFTER INSERT ON ledger_postings REFERENCING NEW TABLE AS new_postings
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_balance();

-- The ledger is append-only: a correction is a new entry, and nothing is ever deleted.
CREATE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger rows are append-only (%)', TG_TABLE_NAME USING ERRCODE = '55000';
END $$;
CREATE TRIGGER ledger_postings_append_only BEFORE UPDATE ON ledger_postings
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_postings_no_delete BEFORE DELETE ON ledger_postings
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_accounts_no_delete BEFORE DELETE ON ledger_accounts
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();

-- ============================================================================================
-- Accounts and contacts
-- ============================================================================================

-- A place the space's money is: a bank account, a card, cash, a crypto wallet, a platform
-- balance. Its money lives in its asset ledger account (same space, same currency).
CREATE TABLE accounts (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  kind text NOT NULL CHECK (kind IN ('bank', 'card', 'cash', 'crypto', 'platform')),
  name text NOT NULL,
  currency text NOT NULL,
  address text,
  chain text,
  network text,
  color text,
  details text NOT NULL DEFAULT '',
  external_signer boolean NOT NULL DEFAULT false,
  opening_acquired_on date,
  opening_balance numeric NOT NULL DEFAULT 0,
  opening_cost numeric,
  -- Created by a push source under its own key for it ("account_key").
  push_source_id uuid,
  created_at timestamptz NOT NULL,
  ledger_account_id uuid,
  push_account_key text,
  -- A crypto account's pay-to address is quoted to payers only once the space proved it
  -- controls it: a one-time challenge, signed by the address (EIP-191 personal_sign).
  address_challenge text,
  address_challenge_expires_at timestamptz,
  address_proven text,
  address_proven_at timestamptz,
  CONSTRAINT accounts_space_id_id_key UNIQUE (space_id, id),
  CONSTRAINT accounts_ledger_account_id_fkey FOREIGN KEY (space_id, ledger_account_id, currency)
    REFERENCES ledger_accounts (space_id, id, currency),
  CONSTRAINT accounts_push_source_id_fkey FOREIGN KEY (space_id, push_source_id)
    REFERENCES push_sources (space_id, id)
);
CREATE INDEX accounts_space_idx ON accounts (space_id, created_at);
CREATE UNIQUE INDEX accounts_push_key ON accounts (push_source_id, push_account_key) WHERE push_account_key IS NOT NULL;
-- The facilitator finds the space that proved a pay-to address.
CREATE INDEX accounts_address_proven_idx ON accounts (address_proven) WHERE address_proven IS NOT NULL;

-- Someone the space deals with (a client, a supplier), with their details.
CREATE TABLE contacts (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  name text NOT NULL,
  kind text NOT NULL,
  note text NOT NULL DEFAULT '',
  address text NOT NULL DEFAULT '',
  country text NOT NULL DEFAULT '',
  email text NOT NULL DEFAULT '',
  phone text NOT NULL DEFAULT '',
  reg_number text NOT NULL DEFAULT '',
  tax_id text NOT NULL DEFAULT '',
  compliance text NOT NULL DEFAULT '',
  identity_id uuid,
  whitelisted boolean NOT NULL DEFAULT false,
  saved_to_book boolean NOT NULL DEFAULT false,
  tags text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  CONSTRAINT contacts_space_id_id_key UNIQUE (space_id, id)
);
CREATE INDEX contacts_space_idx ON contacts (space_id, created_at);

-- One of a contact's payment addresses (bank requisites or a wallet), in the contact's order.
CREATE TABLE contact_addresses (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  contact_id uuid NOT NULL,
  position integer NOT NULL,
  label text NOT NULL DEFAULT '',
  address text NOT NULL DEFAULT '',
  chain text,
  network text,
  details text NOT NULL DEFAULT '',
  is_primary boolean NOT NULL DEFAULT false,
  requisites jsonb,
  CONSTRAINT contact_addresses_contact_id_fkey FOREIGN KEY (space_id, contact_id)
    REFERENCES contacts (space_id, id) ON DELETE CASCADE
);
CREATE INDEX contact_addresses_contact_idx ON contact_addresses (space_id, contact_id, position);

-- ============================================================================================
-- Getting paid: endpoints, prepaid credits and charges, payment requests and settlements
-- ============================================================================================

-- An endpoint the seller charges for: the card on the Endpoints screen.
CREATE TABLE resources (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  address text NOT NULL,
  name text NOT NULL DEFAULT '',
  findable boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (space_id, address),
  CONSTRAINT resources_space_id_id_key UNIQUE (space_id, id)
);
-- The public discovery list reads Findable cards across spaces.
CREATE INDEX resources_findable_idx ON resources (created_at, id) WHERE findable;

-- A client's prepaid balance in one currency, kept in its client_credit ledger account.
CREATE TABLE client_credits (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  client_ref text NOT NULL,
  currency text NOT NULL,
  ledger_account_id uuid NOT NULL,
  contact_id uuid,
  -- The balance page's address: needs no login, so it is a long random token.
  page_token text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  UNIQUE (space_id, client_ref, currency),
  CONSTRAINT client_credits_space_id_id_key UNIQUE (space_id, id),
  CONSTRAINT client_credits_ledger_account_id_fkey FOREIGN KEY (space_id, ledger_account_id, currency)
    REFERENCES ledger_accounts (space_id, id, currency),
  CONSTRAINT client_credits_contact_id_fkey FOREIGN KEY (space_id, contact_id)
    REFERENCES contacts (space_id, id)
);

-- A mirrored or generated invoice, credit note or quote. Line items and the tax breakdown are
-- kept as computed at write time (jsonb), so a reader never recomputes money.
CREATE TABLE invoices (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  -- The key that mirrored the invoice: its webhook address hears invoice.paid.
  key_id uuid REFERENCES integration_keys (id) ON DELETE SET NULL,
  account_id uuid NOT NULL,
  contact_id uuid,
  project_id uuid,
  corrects_invoice_id uuid,
  kind text NOT NULL CHECK (kind IN ('invoice', 'credit_note', 'quote')),
  status text NOT NULL CHECK (status IN ('draft', 'sent', 'partial', 'paid', 'issued', 'void',
    'quote_draft', 'quote_sent', 'quote_accepted', 'quote_declined', 'quote_expired')),
  number text NOT NULL,
  token text NOT NULL UNIQUE,
  currency text NOT NULL,
  issued_on date NOT NULL,
  due_on date NOT NULL,
  client_name text NOT NULL,
  client_email text NOT NULL DEFAULT '',
  client_address text NOT NULL DEFAULT '',
  client_country text NOT NULL DEFAULT '',
  client_country_code text NOT NULL DEFAULT '',
  client_phone text NOT NULL DEFAULT '',
  client_reg_number text NOT NULL DEFAULT '',
  client_tax_id text NOT NULL DEFAULT '',
  seller_name text NOT NULL DEFAULT '',
  seller_email text NOT NULL DEFAULT '',
  seller_phone text NOT NULL DEFAULT '',
  seller_address text NOT NULL DEFAULT '',
  seller_country text NOT NULL DEFAULT '',
  seller_reg_number text NOT NULL DEFAULT '',
  seller_tax_id text NOT NULL DEFAULT '',
  seller_website text NOT NULL DEFAULT '',
  notes text NOT NULL DEFAULT '',
  purchase_order text NOT NULL DEFAULT '',
  tax_authority_number text NOT NULL DEFAULT '',
  tax_exempt_reason text,
  tax_zero_reason text,
  prices_include_tax boolean NOT NULL DEFAULT false,
  line_items jsonb NOT NULL,
  tax_breakdown jsonb NOT NULL,
  subtotal numeric NOT NULL,
  tax_total numeric NOT NULL,
  total numeric NOT NULL CHECK (total >= 0),
  paid_amount numeric NOT NULL DEFAULT 0,
  credited_amount numeric NOT NULL DEFAULT 0,
  auto_remind boolean NOT NULL DEFAULT true,
  last_paid_on date,
  sent_at timestamptz,
  -- Set once, in the transaction that closes the invoice: invoice.paid is written only then.
  paid_event_at timestamptz,
  voided_at timestamptz,
  void_reason text NOT NULL DEFAULT '',
  reminders_paused_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  -- Money that paid the invoice and was later taken back by a chain reorganisation: the
  -- invoice stays as it was (paid stays paid) and the gap is recorded here.
  shortfall_amount numeric NOT NULL DEFAULT 0,
  -- An accepted quote names the invoice made from it.
  invoice_id uuid,
  CHECK (paid_amount >= 0 AND paid_amount <= total),
  CONSTRAINT invoices_space_id_id_key UNIQUE (space_id, id),
  CONSTRAINT invoices_account_id_fkey FOREIGN KEY (space_id, account_id) REFERENCES accounts (space_id, id),
  CONSTRAINT invoices_contact_id_fkey FOREIGN KEY (space_id, contact_id)
    REFERENCES contacts (space_id, id) ON DELETE SET NULL (contact_id),
  CONSTRAINT invoices_corrects_invoice_id_fkey FOREIGN KEY (space_id, corrects_invoice_id)
    REFERENCES invoices (space_id, id),
  CONSTRAINT invoices_invoice_id_fkey FOREIGN KEY (space_id, invoice_id) REFERENCES invoices (space_id, id)
);
-- A seller's document number names one live invoice per space; a voided one frees its number.
CREATE UNIQUE INDEX invoices_live_number ON invoices (space_id, number) WHERE status <> 'void';
CREATE INDEX invoices_space_idx ON invoices (space_id, created_at);
CREATE INDEX invoices_auto_remind_idx ON invoices (due_on) WHERE auto_remind AND kind = 'invoice' AND status IN ('sent', 'partial');

-- The last generated INV-nnnnnn per space (generated numbers skip ones a seller already used).
CREATE TABLE invoice_number_counters (
  space_id uuid PRIMARY KEY REFERENCES spaces (id),
  last_value integer NOT NULL
);

-- Money recorded against an invoice (by hand, by a settlement, by card, or written off).
CREATE TABLE invoice_payments (
  id uuid PRIMARY KEY,
  -- Orders payments recorded within one clock tick.
  seq bigint GENERATED ALWAYS AS IDENTITY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  invoice_id uuid NOT NULL,
  account_id uuid NOT NULL,
  amount numeric NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  via text NOT NULL CHECK (via IN ('manual', 'settlement', 'card', 'write_off')),
  note text NOT NULL DEFAULT '',
  occurred_on date NOT NULL,
  tx_id uuid,
  entry_id uuid,
  created_at timestamptz NOT NULL,
  CONSTRAINT invoice_payments_invoice_id_fkey FOREIGN KEY (space_id, invoice_id)
    REFERENCES invoices (space_id, id) ON DELETE CASCADE,
  CONSTRAINT invoice_payments_account_id_fkey FOREIGN KEY (space_id, account_id) REFERENCES accounts (space_id, id),
  CONSTRAINT invoice_payments_entry_id_fkey FOREIGN KEY (space_id, entry_id) REFERENCES ledger_entries (space_id, id)
);
CREATE INDEX invoice_payments_invoice_idx ON invoice_payments (invoice_id, seq);

-- An invoice sent or a reminder: to whom, by which channels. Automatic reminders go out once
-- per stage (before due, on due, after due), whichever process gets there first.
CREATE TABLE invoice_deliveries (
  id uuid PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  invoice_id uuid NOT NULL,
  purpose text NOT NULL CHECK (purpose IN ('send', 'remind')),
  via text[] NOT NULL,
  recipient text NOT NULL DEFAULT '',
  cc text[] NOT NULL DEFAULT '{}',
  message text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL,
  auto_stage text CHECK (auto_stage IN ('before_due', 'on_due', 'after_due')),
  -- In development without SMTP_URL, mail is written as .eml files; the app lists where.
  mail_file text,
  CONSTRAINT invoice_deliveries_invoice_id_fkey FOREIGN KEY (space_id, invoice_id)
    REFERENCES invoices (space_id, id) ON DELETE CASCADE
);
CREATE INDEX invoice_deliveries_invoice_idx ON invoice_deliveries (invoice_id, purpose, seq);
CREATE UNIQUE INDEX invoice_deliveries_auto_idx ON invoice_deliveries (invoice_id, auto_stage) WHERE auto_stage IS NOT NULL;

-- A request to be paid: a sale, or a top-up of a client's prepaid credit. A request minted
-- from an invoice's public page pays that invoice when it settles.
CREATE TABLE payment_requests (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  token text NOT NULL UNIQUE,
  account_id uuid NOT NULL,
  key_id uuid REFERENCES integration_keys (id) ON DELETE SET NULL,
  purpose text NOT NULL CHECK (purpose IN ('sale', 'top_up')),
  client_credit_id uuid,
  amount numeric NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  amount_received numeric NOT NULL DEFAULT 0,
  status text NOT NULL CHECK (status IN ('active', 'paid', 'cancelled')),
  memo text NOT NULL DEFAULT '',
  resource_id uuid,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  paid_at timestamptz,
  cancelled_at timestamptz,
  invoice_id uuid,
  CHECK ((purpose = 'top_up') = (client_credit_id IS NOT NULL)),
  CONSTRAINT payment_requests_space_id_id_key UNIQUE (space_id, id),
  CONSTRAINT payment_requests_account_id_fkey FOREIGN KEY (space_id, account_id) REFERENCES accounts (space_id, id),
  CONSTRAINT payment_requests_client_credit_id_fkey FOREIGN KEY (space_id, client_credit_id)
    REFERENCES client_credits (space_id, id),
  CONSTRAINT payment_requests_resource_id_fkey FOREIGN KEY (space_id, resource_id)
    REFERENCES resources (space_id, id),
  CONSTRAINT payment_requests_invoice_id_fkey FOREIGN KEY (space_id, invoice_id) REFERENCES invoices (space_id, id)
);
CREATE INDEX payment_requests_lapse_idx ON payment_requests (expires_at) WHERE status = 'active';
CREATE INDEX payment_requests_space_idx ON payment_requests (space_id, created_at);
CREATE INDEX payment_requests_invoice_idx ON payment_requests (invoice_id) WHERE invoice_id IS NOT NULL;

-- Money that landed against a request, booked by its ledger entry. One rail reference settles
-- once per space, whatever retries; a settlement undone by a reorganisation keeps its row, marked.
CREATE TABLE settlements (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  payment_request_id uuid NOT NULL,
  rail text NOT NULL CHECK (rail IN ('x402', 'card', 'bank', 'chain', 'manual')),
  reference text NOT NULL,
  amount numeric NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  payer text NOT NULL DEFAULT '',
  entry_id uuid NOT NULL,
  settled_at timestamptz NOT NULL,
  reversed_at timestamptz,
  UNIQUE (space_id, rail, reference),
  CONSTRAINT settlements_payment_request_id_fkey FOREIGN KEY (space_id, payment_request_id)
    REFERENCES payment_requests (space_id, id),
  CONSTRAINT settlements_entry_id_fkey FOREIGN KEY (space_id, entry_id) REFERENCES ledger_entries (space_id, id)
);
CREATE INDEX settlements_request_idx ON settlements (payment_request_id);

-- One call paid from a client's prepaid credit, booked by its ledger entry.
CREATE TABLE charges (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  client_credit_id uuid NOT NULL,
  account_id uuid NOT NULL,
  key_id uuid REFERENCES integration_keys (id) ON DELETE SET NULL,
  amount numeric NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  memo text NOT NULL DEFAULT '',
  resource_id uuid,
  entry_id uuid NOT NULL,
  created_at timestamptz NOT NULL,
  CONSTRAINT charges_client_credit_id_fkey FOREIGN KEY (space_id, client_credit_id)
    REFERENCES client_credits (space_id, id),
  CONSTRAINT charges_account_id_fkey FOREIGN KEY (space_id, account_id) REFERENCES accounts (space_id, id),
  CONSTRAINT charges_resource_id_fkey FOREIGN KEY (space_id, resource_id) REFERENCES resources (space_id, id),
  CONSTRAINT charges_entry_id_fkey FOREIGN KEY (space_id, entry_id) REFERENCES ledger_entries (space_id, id)
);
CREATE INDEX charges_credit_idx ON charges (client_credit_id, created_at);

-- ============================================================================================
-- Events and webhooks
-- ============================================================================================

-- Something that happened, written in the same transaction as the change that caused it.
-- Delivery belongs to the webhooks feature; this table is only the durable record. Events are
-- written once and read back whole: `json` keeps them as written, cheaper to take in than jsonb.
CREATE TABLE outbox_events (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  channel text NOT NULL CHECK (channel IN ('key', 'book')),
  -- The key channel goes to one integration key's webhook address.
  key_id uuid REFERENCES integration_keys (id) ON DELETE CASCADE,
  event text NOT NULL,
  payload json NOT NULL,
  occurred_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  -- Set once the webhooks feature has turned the event into deliveries.
  dispatched_at timestamptz,
  CHECK ((channel = 'key') = (key_id IS NOT NULL))
);
CREATE INDEX outbox_events_pending_idx ON outbox_events (created_at) WHERE dispatched_at IS NULL;
CREATE INDEX outbox_events_space_idx ON outbox_events (space_id, created_at);
-- Events are kept as long as their journal (30 days); the pruning walks them by age.
CREATE INDEX outbox_events_dispatched_age_idx ON outbox_events (created_at) WHERE dispatched_at IS NOT NULL;

-- Many events written at once (a pushed batch writes one per row), travelling as one row: the
-- webhooks fan-out turns a group into outbox_events rows before it claims events.
CREATE TABLE outbox_event_groups (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  channel text NOT NULL CHECK (channel IN ('key', 'book')),
  key_id uuid REFERENCES integration_keys (id) ON DELETE CASCADE,
  -- A JSON array of [event, payload] pairs, in the order they happened.
  events json NOT NULL,
  occurred_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  CHECK ((channel = 'key') = (key_id IS NOT NULL))
);
CREATE INDEX outbox_event_groups_created_idx ON outbox_event_groups (created_at);
-- A group is a large JSON value that PostgreSQL compresses out of line; lz4 does that in well
-- under half the time of pglz. A server built without lz4 (embedded PGlite is) keeps pglz.
DO $$
BEGIN
  ALTER TABLE outbox_event_groups ALTER COLUMN events SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  NULL;
END $$;

-- A space's webhook subscription (spec §6.2): an address, the events it hears (empty: all).
CREATE TABLE webhook_subscriptions (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  url text NOT NULL,
  -- Empty means every event, including events added later.
  events text[] NOT NULL,
  secret_sealed text NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'paused')),
  created_at timestamptz NOT NULL,
  paused_at timestamptz,
  -- The first failed attempt of the current run of failures: since the last success, creation or
  -- resume, with no day-long quiet gap in it. A run a day long pauses the subscription.
  failing_since timestamptz,
  last_failure_at timestamptz,
  last_success_at timestamptz
);
CREATE INDEX webhook_subscriptions_space_idx ON webhook_subscriptions (space_id, created_at);

-- One event to one target (a key's webhook or a subscription), attempted until delivered or
-- given up. The row is the delivery journal.
CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  event_id uuid NOT NULL REFERENCES outbox_events (id) ON DELETE CASCADE,
  event text NOT NULL,
  target_kind text NOT NULL CHECK (target_kind IN ('key', 'subscription')),
  key_id uuid REFERENCES integration_keys (id) ON DELETE CASCADE,
  subscription_id uuid REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
  -- pending: will be attempted at next_attempt_at; held: waits for its paused subscription to
  -- resume; delivered and given_up are final until someone asks for a retry.
  status text NOT NULL CHECK (status IN ('pending', 'held', 'delivered', 'given_up')),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  -- The attempt after which a failure gives up: the channel's schedule length, or one more than
  -- the attempts made when a person asked for a retry.
  attempts_max integer NOT NULL CHECK (attempts_max >= 1),
  next_attempt_at timestamptz NOT NULL,
  -- A claim: the worker holding lease_token may attempt the delivery until leased_until; after
  -- that (a crashed or stalled worker) another worker may claim it again.
  leased_until timestamptz,
  lease_token uuid,
  last_status_code integer,
  last_error text,
  last_attempt_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  delivered_at timestamptz,
  CHECK ((target_kind = 'key') = (key_id IS NOT NULL)),
  CHECK ((target_kind = 'subscription') = (subscription_id IS NOT NULL))
);
-- Each target gets one delivery per event, however often fan-out runs. The index also serves
-- the cascade when an event is pruned (event_id leads).
CREATE UNIQUE INDEX webhook_deliveries_target_idx
  ON webhook_deliveries (event_id, (COALESCE(key_id, subscription_id)));
-- The claim: due pending rows in time order.
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
-- The journal of one subscription, newest first, and the space-wide tail.
CREATE INDEX webhook_deliveries_subscription_idx ON webhook_deliveries (subscription_id, created_at, id)
  WHERE subscription_id IS NOT NULL;
CREATE INDEX webhook_deliveries_space_updated_idx ON webhook_deliveries (space_id, updated_at);

-- ============================================================================================
-- Push: rows from another system, filed as one undoable batch per call
-- ============================================================================================

-- One push call: what it booked, skipped and refused. Undoing marks it undone; it is kept.
CREATE TABLE push_batches (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  push_source_id uuid NOT NULL,
  key_id uuid REFERENCES integration_keys (id) ON DELETE SET NULL,
  status text NOT NULL CHECK (status IN ('booked', 'undone')),
  rows_total integer NOT NULL,
  booked integer NOT NULL,
  duplicates integer NOT NULL,
  skipped_closed integer NOT NULL,
  rejected integer NOT NULL,
  accounts_created text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  undone_at timestamptz,
  -- What a pushed row names: a batch of its own space and source.
  CONSTRAINT push_batches_scope_key UNIQUE (id, space_id, push_source_id),
  CONSTRAINT push_batches_push_source_id_fkey FOREIGN KEY (space_id, push_source_id)
    REFERENCES push_sources (space_id, id)
);
CREATE INDEX push_batches_source_idx ON push_batches (space_id, push_source_id, created_at);

-- One external_id a source has filed, and the entry it became; undoing a batch frees its ids.
-- The row's batch is of its space and source, and its entry is of its space.
CREATE TABLE push_rows (
  push_source_id uuid NOT NULL,
  -- An opaque identifier from another system, compared byte for byte.
  external_id text COLLATE "C" NOT NULL,
  space_id uuid NOT NULL,
  batch_id uuid NOT NULL,
  entry_id uuid NOT NULL,
  PRIMARY KEY (push_source_id, external_id),
  CONSTRAINT push_rows_batch_id_fkey FOREIGN KEY (batch_id, space_id, push_source_id)
    REFERENCES push_batches (id, space_id, push_source_id),
  CONSTRAINT push_rows_entry_id_fkey FOREIGN KEY (space_id, entry_id) REFERENCES ledger_entries (space_id, id)
);
CREATE INDEX push_rows_batch_idx ON push_rows (batch_id);

-- Synced rows per space and calendar month (UTC), against the plan's allowance.
CREATE TABLE push_usage (
  space_id uuid NOT NULL REFERENCES spaces (id),
  month date NOT NULL,
  rows_booked integer NOT NULL DEFAULT 0,
  PRIMARY KEY (space_id, month)
);

-- ============================================================================================
-- Chains: x402 settlements and the account watch
-- ============================================================================================

-- One EIP-3009 authorization Tollbook was asked to put on chain. The row is claimed before
-- anything is broadcast, so one authorization is sent at most once and one payment request
-- takes at most one machine settlement at a time.
CREATE TABLE x402_settlements (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  -- The request paid on its page, or the request minted for a facilitator call once settled.
  payment_request_id uuid,
  via text NOT NULL CHECK (via IN ('page', 'facilitator')),
  network text NOT NULL,
  asset text NOT NULL,
  payer text NOT NULL,
  pay_to text NOT NULL,
  nonce text NOT NULL,
  amount_base numeric NOT NULL CHECK (amount_base > 0),
  resource_url text,
  -- SHA-256 of the signature: a retry carries the same one, another authorization does not.
  signature_hash text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'settled', 'failed')),
  tx_hash text,
  error_reason text,
  lease_until timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  settled_at timestamptz,
  CONSTRAINT x402_settlements_payment_request_id_fkey FOREIGN KEY (space_id, payment_request_id)
    REFERENCES payment_requests (space_id, id)
);
-- An authorization (token, payer, nonce) is live in at most one row; a failed attempt frees it.
CREATE UNIQUE INDEX x402_settlements_authorization_idx
  ON x402_settlements (network, asset, payer, nonce) WHERE status <> 'failed';
-- A request is being paid, or was paid, by at most one authorization.
CREATE UNIQUE INDEX x402_settlements_request_idx
  ON x402_settlements (payment_request_id) WHERE status <> 'failed' AND via = 'page';
CREATE INDEX x402_settlements_space_idx ON x402_settlements (space_id, created_at);

-- A transaction broadcast whose receipt did not arrive in time, keyed by the signature's hash:
-- the x402 scheme's pending-settlement store, shared by every server process.
CREATE TABLE x402_pending_transactions (
  signature_hash text PRIMARY KEY,
  tx_hash text NOT NULL,
  created_at timestamptz NOT NULL
);

-- Per network, the next block the account watch reads. `network` here and below is the
-- chain's key: its CAIP-2 id and genesis block hash, so a development node restarted from
-- scratch (same id, new chain) gets a cursor of its own.
CREATE TABLE chain_cursors (
  network text PRIMARY KEY,
  next_block bigint NOT NULL,
  updated_at timestamptz NOT NULL
);

-- A token transfer to a watched address and what it was booked as, so a restart neither loses
-- nor doubles a log and a reorganisation can undo exactly what the transfer booked.
CREATE TABLE chain_transfers (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  account_id uuid NOT NULL,
  network text NOT NULL,
  tx_hash text NOT NULL,
  log_index integer NOT NULL,
  block_number bigint NOT NULL,
  block_hash text NOT NULL,
  payer text NOT NULL,
  amount numeric NOT NULL CHECK (amount > 0),
  -- 'watch': booked by the watch (requests filled, remainder as income); 'x402': already booked
  -- by an x402 settlement, followed here only to undo it if the block is reorganised away.
  source text NOT NULL CHECK (source IN ('watch', 'x402')),
  remainder_entry_id uuid,
  status text NOT NULL CHECK (status IN ('booked', 'reversed')),
  created_at timestamptz NOT NULL,
  reversed_at timestamptz,
  UNIQUE (network, tx_hash, log_index),
  CONSTRAINT chain_transfers_account_id_fkey FOREIGN KEY (space_id, account_id) REFERENCES accounts (space_id, id),
  CONSTRAINT chain_transfers_remainder_entry_id_fkey FOREIGN KEY (space_id, remainder_entry_id)
    REFERENCES ledger_entries (space_id, id)
);
CREATE INDEX chain_transfers_recent_idx ON chain_transfers (network, block_number) WHERE status = 'booked';

-- ============================================================================================
-- Sites
-- ============================================================================================

-- A site a space proved it controls: its payment pages may be framed there, and nowhere else.
CREATE TABLE sites (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  origin text NOT NULL,
  token text NOT NULL,
  verified_at timestamptz,
  created_at timestamptz NOT NULL,
  UNIQUE (space_id, origin)
);
