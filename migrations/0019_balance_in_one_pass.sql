-- The postings' check reads the statement's postings once for two questions: each entry's sum
-- per currency, and whether the entry is filed in the posting's space. One aggregation serves
-- both, where two passes (a DISTINCT, then a GROUP BY) each read every posting. The order in
-- which problems are reported is unchanged: a missing entry, then a wrong ledger account, then
-- an entry that does not balance.
CREATE OR REPLACE FUNCTION ledger_entries_balance() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  offender uuid;
  orphan boolean;
  misfiled uuid;
BEGIN
  -- Parents are fetched by primary key alone (= ANY), so a check costs the batch, not the table.
  WITH sums AS MATERIALIZED (
    SELECT entry_id, space_id, currency, SUM(amount) AS total
    FROM new_postings GROUP BY entry_id, space_id, currency
  ),
  parents AS MATERIALIZED (
    SELECT id, space_id FROM ledger_entries WHERE id = ANY (ARRAY(SELECT DISTINCT entry_id FROM sums))
  )
  SELECT s.entry_id, e.id IS NULL INTO offender, orphan
  FROM sums s
  LEFT JOIN parents e ON e.id = s.entry_id AND e.space_id = s.space_id
  WHERE e.id IS NULL OR s.total <> 0
  ORDER BY e.id IS NULL DESC
  LIMIT 1;
  IF orphan THEN
    RAISE EXCEPTION 'a posting names entry %, which its space does not have', offender USING ERRCODE = '23503';
  END IF;
  WITH parents AS MATERIALIZED (
    SELECT id, space_id, currency FROM ledger_accounts
    WHERE id = ANY (ARRAY(SELECT DISTINCT ledger_account_id FROM new_postings))
  )
  SELECT n.ledger_account_id INTO misfiled
  FROM (SELECT DISTINCT ledger_account_id, space_id, currency FROM new_postings) n
  LEFT JOIN parents a ON a.id = n.ledger_account_id AND a.space_id = n.space_id AND a.currency = n.currency
  WHERE a.id IS NULL
  LIMIT 1;
  IF misfiled IS NOT NULL THEN
    RAISE EXCEPTION 'a posting names ledger account %, which its space does not hold in that currency', misfiled
      USING ERRCODE = '23503';
  END IF;
  IF offender IS NOT NULL THEN
    RAISE EXCEPTION 'ledger entry % does not balance', offender USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$;
-- Replacing a function resets its settings; the lookups stay by key (see 0014).
ALTER FUNCTION ledger_entries_balance() SET enable_seqscan = off;
ALTER FUNCTION ledger_entries_balance() SET enable_nestloop = off;
