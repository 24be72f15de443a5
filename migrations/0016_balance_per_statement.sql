-- Whether entries balance is now decided from the statement's own postings: every statement is
-- checked, an entry's earlier postings were balanced when they were filed, and so the entry
-- balances after this statement exactly when this statement's postings for it sum to zero in
-- each currency. Reading every touched entry's postings back from the table is not needed.
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
  SELECT entry_id INTO offender
  FROM new_postings
  GROUP BY entry_id, currency
  HAVING SUM(amount) <> 0
  LIMIT 1;
  IF offender IS NOT NULL THEN
    RAISE EXCEPTION 'ledger entry % does not balance', offender USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$;
-- Replacing a function resets its settings; the lookups stay by key (see 0014).
ALTER FUNCTION ledger_entries_balance() SET enable_seqscan = off;
ALTER FUNCTION ledger_entries_balance() SET enable_nestloop = off;

-- Entries are found by their cause only when they have one; pushed rows (hundreds a call) have
-- none and need no place in that index.
DROP INDEX ledger_entries_cause_idx;
CREATE INDEX ledger_entries_cause_idx ON ledger_entries (space_id, cause_type, cause_id) WHERE cause_id IS NOT NULL;
