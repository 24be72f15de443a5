-- Bulk filing (a pushed batch books 500 entries, 1,000 postings) spent more time in per-row
-- foreign-key checks than in the inserts themselves: PostgreSQL runs one lookup and one row lock
-- per reference per row, thousands of them for a handful of distinct parents. The same rules
-- now hold with one set-based check per statement, and stricter than before: a posting must
-- belong to an entry of its own space and move an account of its own space and currency.

-- The ledger keeps everything: rows are never deleted, as they are never changed. With no
-- delete, a parent cannot vanish under a posting, which is what the row locks guarded against.
CREATE TRIGGER ledger_postings_no_delete BEFORE DELETE ON ledger_postings
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_accounts_no_delete BEFORE DELETE ON ledger_accounts
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();

ALTER TABLE ledger_postings DROP CONSTRAINT ledger_postings_entry_id_fkey;
ALTER TABLE ledger_postings DROP CONSTRAINT ledger_postings_ledger_account_id_fkey;

CREATE OR REPLACE FUNCTION ledger_entries_balance() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  offender uuid;
BEGIN
  -- Parents are fetched by primary key alone (= ANY), so a check costs the batch, not the table.
  WITH parents AS MATERIALIZED (
    SELECT id, space_id FROM ledger_entries WHERE id = ANY (ARRAY(SELECT DISTINCT entry_id FROM new_postings))
  )
  SELECT n.entry_id INTO offender
  FROM (SELECT DISTINCT entry_id, space_id FROM new_postings) n
  LEFT JOIN parents e ON e.id = n.entry_id AND e.space_id = n.space_id
  WHERE e.id IS NULL
  LIMIT 1;
  IF offender IS NOT NULL THEN
    RAISE EXCEPTION 'a posting names entry %, which its space does not have', offender USING ERRCODE = '23503';
  END IF;
  WITH parents AS MATERIALIZED (
    SELECT id, space_id, currency FROM ledger_accounts
    WHERE id = ANY (ARRAY(SELECT DISTINCT ledger_account_id FROM new_postings))
  )
  SELECT n.ledger_account_id INTO offender
  FROM (SELECT DISTINCT ledger_account_id, space_id, currency FROM new_postings) n
  LEFT JOIN parents a ON a.id = n.ledger_account_id AND a.space_id = n.space_id AND a.currency = n.currency
  WHERE a.id IS NULL
  LIMIT 1;
  IF offender IS NOT NULL THEN
    RAISE EXCEPTION 'a posting names ledger account %, which its space does not hold in that currency', offender
      USING ERRCODE = '23503';
  END IF;
  SELECT p.entry_id INTO offender
  FROM ledger_postings p
  WHERE p.entry_id = ANY (ARRAY(SELECT DISTINCT entry_id FROM new_postings))
  GROUP BY p.entry_id, p.currency
  HAVING SUM(p.amount) <> 0
  LIMIT 1;
  IF offender IS NOT NULL THEN
    RAISE EXCEPTION 'ledger entry % does not balance', offender USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$;

-- A pushed row's source and space are its batch's: one composite reference checks all three.
ALTER TABLE push_batches ADD CONSTRAINT push_batches_scope_key UNIQUE (id, space_id, push_source_id);
ALTER TABLE push_rows DROP CONSTRAINT push_rows_batch_id_fkey;
ALTER TABLE push_rows DROP CONSTRAINT push_rows_space_id_fkey;
ALTER TABLE push_rows DROP CONSTRAINT push_rows_push_source_id_fkey;
ALTER TABLE push_rows ADD CONSTRAINT push_rows_batch_scope_fkey FOREIGN KEY (batch_id, space_id, push_source_id)
  REFERENCES push_batches (id, space_id, push_source_id) ON DELETE CASCADE;

-- The checks run as cached plans. Planned while the ledger was small (a new database), they
-- would scan whole tables ever after, or pair the statement's rows with their parents in a
-- nested loop; rows are looked up by key and paired by hashing, however small the tables look.
ALTER FUNCTION ledger_entries_balance() SET enable_seqscan = off;
ALTER FUNCTION ledger_entries_balance() SET enable_nestloop = off;
