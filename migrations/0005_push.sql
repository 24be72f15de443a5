-- Push batches: rows from another system filed as one undoable batch per call.

-- Imported money out needs somewhere to go.
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check
  CHECK (kind IN ('asset', 'income', 'expense', 'client_credit', 'equity', 'clearing'));

-- The per-row deferred check becomes one check per statement: every entry's postings are
-- written by one INSERT, so checking the entries a statement touched is enough, and a batch of
-- 500 entries is checked in one pass instead of a thousand.
DROP TRIGGER ledger_postings_balance ON ledger_postings;
CREATE OR REPLACE FUNCTION ledger_entries_balance() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  offender uuid;
BEGIN
  SELECT p.entry_id INTO offender
  FROM ledger_postings p
  WHERE p.entry_id IN (SELECT DISTINCT entry_id FROM new_postings)
  GROUP BY p.entry_id, p.currency
  HAVING SUM(p.amount) <> 0
  LIMIT 1;
  IF offender IS NOT NULL THEN
    RAISE EXCEPTION 'ledger entry % does not balance', offender USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER ledger_postings_balance
  AFTER INSERT ON ledger_postings REFERENCING NEW TABLE AS new_postings
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_balance();
DROP FUNCTION ledger_entry_balances();

-- Postings are always read by their entry: the entry id leads the primary key, which makes the
-- separate entry index redundant and keeps bulk inserts to two indexes.
ALTER TABLE ledger_postings DROP CONSTRAINT ledger_postings_pkey;
ALTER TABLE ledger_postings ADD PRIMARY KEY (entry_id, id);
DROP INDEX ledger_postings_entry_idx;

-- Accounts a push source created by its own key for them ("account_key").
ALTER TABLE accounts ADD COLUMN push_account_key text;
CREATE UNIQUE INDEX accounts_push_key ON accounts (push_source_id, push_account_key) WHERE push_account_key IS NOT NULL;

-- Books are closed through a date: rows dated on or before it are never filed.
ALTER TABLE spaces ADD COLUMN closed_through date;

CREATE TABLE push_batches (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  push_source_id uuid NOT NULL REFERENCES push_sources (id),
  key_id uuid REFERENCES integration_keys (id) ON DELETE SET NULL,
  status text NOT NULL CHECK (status IN ('booked', 'undone')),
  rows_total integer NOT NULL,
  booked integer NOT NULL,
  duplicates integer NOT NULL,
  skipped_closed integer NOT NULL,
  rejected integer NOT NULL,
  accounts_created text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  undone_at timestamptz
);
CREATE INDEX push_batches_source_idx ON push_batches (space_id, push_source_id, created_at);

-- One row per external_id a source has filed; undoing a batch frees its ids.
CREATE TABLE push_rows (
  push_source_id uuid NOT NULL REFERENCES push_sources (id),
  external_id text NOT NULL,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  batch_id uuid NOT NULL REFERENCES push_batches (id) ON DELETE CASCADE,
  -- Checked at commit: a batch claims its external_ids before it writes their entries.
  entry_id uuid NOT NULL REFERENCES ledger_entries (id) DEFERRABLE INITIALLY DEFERRED,
  PRIMARY KEY (push_source_id, external_id)
);
CREATE INDEX push_rows_batch_idx ON push_rows (batch_id);

-- Synced rows per space and calendar month (UTC), against the plan's allowance.
CREATE TABLE push_usage (
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  month date NOT NULL,
  rows_booked integer NOT NULL DEFAULT 0,
  PRIMARY KEY (space_id, month)
);
