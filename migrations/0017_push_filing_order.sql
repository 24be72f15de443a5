-- A pushed batch now knows which of its external_ids its source filed already before it writes
-- anything: the batches of one source queue on the source's row, so a plain read after that lock
-- sees every earlier batch. Its entries are filed first and its pushed rows after them, so the
-- reference from a pushed row to its entry no longer has to wait for commit. The deferred
-- foreign key looked each entry up and key-share locked it, one row at a time, at commit (500
-- lookups and locks a batch); the rule now holds with one check per statement, as the others
-- do (0014, 0015). Ledger entries are never deleted, so the check needs no lock.
ALTER TABLE push_rows DROP CONSTRAINT push_rows_entry_id_fkey;

CREATE OR REPLACE FUNCTION push_rows_parents() RETURNS trigger LANGUAGE plpgsql AS $$
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
  -- A pushed row's entry is already filed, in the row's own space.
  WITH entries AS MATERIALIZED (
    SELECT id, space_id FROM ledger_entries WHERE id = ANY (ARRAY(SELECT entry_id FROM new_rows))
  )
  SELECT n.entry_id INTO offender
  FROM new_rows n
  LEFT JOIN entries e ON e.id = n.entry_id AND e.space_id = n.space_id
  WHERE e.id IS NULL
  LIMIT 1;
  IF offender IS NOT NULL THEN
    RAISE EXCEPTION 'a pushed row names entry %, which its space does not have', offender
      USING ERRCODE = '23503';
  END IF;
  RETURN NULL;
END $$;
-- Replacing a function resets its settings; the lookups stay by key (see 0014).
ALTER FUNCTION push_rows_parents() SET enable_seqscan = off;
ALTER FUNCTION push_rows_parents() SET enable_nestloop = off;

-- Many events written at once (a pushed batch writes one per row) travel as one group row: the
-- webhooks fan-out turns a group into ordinary outbox_events rows in its own transaction, before
-- it claims events, so everything after that point is unchanged. Writing 500 event rows with
-- their three indexes was a fifth of a batch's time in the database.
CREATE TABLE outbox_event_groups (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL,
  channel text NOT NULL CHECK (channel IN ('key', 'book')),
  key_id uuid REFERENCES integration_keys (id) ON DELETE CASCADE,
  -- A JSON array of [event, payload] pairs, in the order they happened.
  events json NOT NULL,
  occurred_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  CHECK ((channel = 'key') = (key_id IS NOT NULL))
);
CREATE INDEX outbox_event_groups_created_idx ON outbox_event_groups (created_at);
-- The same per-statement space check as outbox_events (0015): its function reads new_events.
CREATE TRIGGER outbox_event_groups_parents
  AFTER INSERT ON outbox_event_groups REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION outbox_events_parents();

-- A group is a large JSON value (about 120 kB for 500 events) that PostgreSQL compresses out of
-- line. lz4 does that in well under half the time of the default pglz; a server built without
-- lz4 (embedded PGlite is) keeps the default.
DO $$
BEGIN
  ALTER TABLE outbox_event_groups ALTER COLUMN events SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  NULL;
END $$;
