-- The rest of a pushed batch's row-by-row reference checks (see 0014): every ledger entry and
-- every outbox event looked its space up, one row at a time, though a batch names one space.
-- The same rules hold with one check per statement. As a foreign key would, the check takes a
-- key-share lock on the spaces it names, so a space cannot be deleted under a filing.

CREATE FUNCTION spaces_exist(ids uuid[]) RETURNS uuid LANGUAGE plpgsql AS $$
DECLARE
  missing uuid;
BEGIN
  PERFORM 1 FROM spaces WHERE id = ANY (ids) FOR KEY SHARE;
  SELECT wanted INTO missing
  FROM unnest(ids) AS wanted
  WHERE NOT EXISTS (SELECT 1 FROM spaces WHERE spaces.id = wanted)
  LIMIT 1;
  RETURN missing;
END $$;

CREATE FUNCTION ledger_entries_parents() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  offender uuid;
BEGIN
  offender := spaces_exist(ARRAY(SELECT DISTINCT space_id FROM new_entries));
  IF offender IS NOT NULL THEN
    RAISE EXCEPTION 'a ledger entry names space %, which does not exist', offender USING ERRCODE = '23503';
  END IF;
  -- A reversal reverses an entry of its own space.
  WITH reversed AS MATERIALIZED (
    SELECT id, space_id FROM ledger_entries
    WHERE id = ANY (ARRAY(SELECT reverses_entry_id FROM new_entries WHERE reverses_entry_id IS NOT NULL))
  )
  SELECT n.reverses_entry_id INTO offender
  FROM new_entries n
  LEFT JOIN reversed r ON r.id = n.reverses_entry_id AND r.space_id = n.space_id
  WHERE n.reverses_entry_id IS NOT NULL AND r.id IS NULL
  LIMIT 1;
  IF offender IS NOT NULL THEN
    RAISE EXCEPTION 'a reversal names entry %, which its space does not have', offender USING ERRCODE = '23503';
  END IF;
  RETURN NULL;
END $$;
ALTER FUNCTION ledger_entries_parents() SET enable_seqscan = off;
ALTER FUNCTION ledger_entries_parents() SET enable_nestloop = off;

ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_space_id_fkey;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_reverses_entry_id_fkey;
CREATE TRIGGER ledger_entries_parents
  AFTER INSERT ON ledger_entries REFERENCING NEW TABLE AS new_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_parents();

CREATE FUNCTION outbox_events_parents() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  offender uuid;
BEGIN
  offender := spaces_exist(ARRAY(SELECT DISTINCT space_id FROM new_events));
  IF offender IS NOT NULL THEN
    RAISE EXCEPTION 'an event names space %, which does not exist', offender USING ERRCODE = '23503';
  END IF;
  RETURN NULL;
END $$;

ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_space_id_fkey;
CREATE TRIGGER outbox_events_parents
  AFTER INSERT ON outbox_events REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION outbox_events_parents();

-- Events are written once and read back whole; `json` keeps them as written, which costs far
-- less to take in than `jsonb`'s decomposed form (a batch writes hundreds).
ALTER TABLE outbox_events ALTER COLUMN payload TYPE json USING payload::json;

-- With the references above checked per statement, nothing cascades from a space any more: a
-- space keeps its books and is never deleted (none ever was).
CREATE FUNCTION spaces_refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'a space keeps its books; it is never deleted' USING ERRCODE = '55000';
END $$;
CREATE TRIGGER spaces_no_delete BEFORE DELETE ON spaces
  FOR EACH STATEMENT EXECUTE FUNCTION spaces_refuse_delete();

-- A pushed row belongs to its batch, in the batch's space and source (0014 made this one
-- composite reference; it is now one check per statement). Batches are never deleted: an
-- undone batch keeps its row, marked undone.
CREATE FUNCTION push_rows_parents() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  offender uuid;
BEGIN
  WITH batches AS MATERIALIZED (
    SELECT id, space_id, push_source_id FROM push_batches
    WHERE id = ANY (ARRAY(SELECT DISTINCT batch_id FROM new_rows))
    FOR KEY SHARE
  )
  SELECT n.batch_id INTO offender
  FROM (SELECT DISTINCT batch_id, space_id, push_source_id FROM new_rows) n
  LEFT JOIN batches b ON b.id = n.batch_id AND b.space_id = n.space_id AND b.push_source_id = n.push_source_id
  WHERE b.id IS NULL
  LIMIT 1;
  IF offender IS NOT NULL THEN
    RAISE EXCEPTION 'a pushed row names batch %, which is not of its space and source', offender
      USING ERRCODE = '23503';
  END IF;
  RETURN NULL;
END $$;
ALTER FUNCTION push_rows_parents() SET enable_seqscan = off;
ALTER FUNCTION push_rows_parents() SET enable_nestloop = off;

ALTER TABLE push_rows DROP CONSTRAINT push_rows_batch_scope_fkey;
CREATE TRIGGER push_rows_parents
  AFTER INSERT ON push_rows REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION push_rows_parents();
CREATE FUNCTION push_batches_refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'a push batch is kept; undo marks it undone' USING ERRCODE = '55000';
END $$;
CREATE TRIGGER push_batches_no_delete BEFORE DELETE ON push_batches
  FOR EACH STATEMENT EXECUTE FUNCTION push_batches_refuse_delete();
