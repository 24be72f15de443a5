-- Foundation: people, spaces, members, integration keys, and the shared request machinery
-- (idempotency records and rate counters). Every table holding a space's data carries space_id.

CREATE TABLE users (
  id uuid PRIMARY KEY,
  email text NOT NULL,
  name text NOT NULL,
  password_hash text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

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
  created_at timestamptz NOT NULL
);

CREATE TABLE members (
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (space_id, user_id)
);
CREATE INDEX members_user_idx ON members (user_id);

CREATE TABLE push_sources (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  name text NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (space_id, name)
);

CREATE TABLE integration_keys (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  issuer_user_id uuid NOT NULL REFERENCES users (id),
  name text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  scopes text[] NOT NULL,
  webhook_url text,
  webhook_secret_sealed text NOT NULL,
  push_source_id uuid REFERENCES push_sources (id),
  created_at timestamptz NOT NULL,
  expires_at timestamptz,
  revoked_at timestamptz,
  expiry_reminded_at timestamptz
);
CREATE INDEX integration_keys_space_idx ON integration_keys (space_id);
CREATE INDEX integration_keys_expiry_idx ON integration_keys (expires_at)
  WHERE revoked_at IS NULL AND expiry_reminded_at IS NULL AND expires_at IS NOT NULL;

CREATE TABLE notifications (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kind text NOT NULL,
  subject_id uuid,
  payload jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL,
  read_at timestamptz,
  UNIQUE (space_id, user_id, kind, subject_id)
);

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

CREATE TABLE accounts (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
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
  balance numeric NOT NULL DEFAULT 0,
  push_source_id uuid REFERENCES push_sources (id),
  created_at timestamptz NOT NULL
);
CREATE INDEX accounts_space_idx ON accounts (space_id, created_at);

CREATE TABLE contacts (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
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
  created_at timestamptz NOT NULL
);
CREATE INDEX contacts_space_idx ON contacts (space_id, created_at);

CREATE TABLE contact_addresses (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  contact_id uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
  position integer NOT NULL,
  label text NOT NULL DEFAULT '',
  address text NOT NULL DEFAULT '',
  chain text,
  network text,
  details text NOT NULL DEFAULT '',
  is_primary boolean NOT NULL DEFAULT false,
  requisites jsonb
);
CREATE INDEX contact_addresses_contact_idx ON contact_addresses (space_id, contact_id, position);
