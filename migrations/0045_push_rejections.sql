-- Issue 17: the Push sources screen shows why each rejected row of a batch was refused.

-- One row a push batch refused, and why (what PushOut's errors[] answered the caller). A batch
-- holds at most 500 rows, so it keeps at most 500 of these; they go when the batch goes.
CREATE TABLE push_rejections (
  batch_id uuid NOT NULL,
  space_id uuid NOT NULL,
  push_source_id uuid NOT NULL,
  -- The row's place in the pushed array, from 0.
  row_index integer NOT NULL CHECK (row_index >= 0 AND row_index < 500),
  -- The row's external_id when it had a usable one; null when that field was what was wrong.
  external_id text COLLATE "C" CHECK (char_length(external_id) BETWEEN 1 AND 128),
  error text NOT NULL CHECK (error IN ('invalid_row', 'currency_mismatch', 'allowance_exceeded')),
  detail text NOT NULL CHECK (char_length(detail) BETWEEN 1 AND 500),
  PRIMARY KEY (batch_id, row_index),
  CONSTRAINT push_rejections_batch_id_fkey FOREIGN KEY (batch_id, space_id, push_source_id)
    REFERENCES push_batches (id, space_id, push_source_id)
);

-- The batches screen reads a book's batches newest first, 50 a page (optionally of one source).
CREATE INDEX push_batches_space_created_idx ON push_batches (space_id, created_at DESC, id DESC);
