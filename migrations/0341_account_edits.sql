-- An edit of an account in the app: who made it, when, and what changed (each changed field with
-- its value before and after, as JSON). Written in the same transaction as the edit itself.
CREATE TABLE account_edits (
  id uuid NOT NULL,
  space_id uuid NOT NULL REFERENCES spaces (id),
  account_id uuid NOT NULL,
  user_id uuid NOT NULL REFERENCES users (id),
  changed jsonb NOT NULL CHECK (jsonb_typeof(changed) = 'object' AND changed <> '{}'::jsonb),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (space_id, id),
  FOREIGN KEY (space_id, account_id) REFERENCES accounts (space_id, id)
);
CREATE INDEX account_edits_account_idx ON account_edits (space_id, account_id, created_at DESC);
