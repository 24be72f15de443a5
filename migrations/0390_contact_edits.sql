-- An edit of a contact (app or app API): who made it, when, and what changed (each changed field
-- with its value before and after, as JSON). Written in the same transaction as the edit itself.
-- Deleting a contact deletes its history with it.
CREATE TABLE contact_edits (
  id uuid NOT NULL,
  space_id uuid NOT NULL REFERENCES spaces (id),
  contact_id uuid NOT NULL,
  user_id uuid NOT NULL REFERENCES users (id),
  changed jsonb NOT NULL CHECK (jsonb_typeof(changed) = 'object' AND changed <> '{}'::jsonb),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (space_id, id),
  FOREIGN KEY (space_id, contact_id) REFERENCES contacts (space_id, id) ON DELETE CASCADE
);
CREATE INDEX contact_edits_contact_idx ON contact_edits (space_id, contact_id, created_at DESC);
