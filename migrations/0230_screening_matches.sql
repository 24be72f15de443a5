-- Screening: what a list entry says as listed and under which programs, so a hold can show the
-- owner what it matched; the list's refresh state (the conditional-request validators of the
-- download it came from, and when the source was last asked); the match that held a payment.
ALTER TABLE screening_entries
  ADD COLUMN listed text NOT NULL DEFAULT '',
  ADD COLUMN programs text NOT NULL DEFAULT '';

ALTER TABLE screening_lists
  ADD COLUMN etag text,
  ADD COLUMN last_modified text,
  ADD COLUMN checked_at timestamptz,
  ADD COLUMN check_outcome text;

-- The list entry that held a payment (the latest hold; an owner reads it before releasing):
-- how it matched (kind), the entry as listed, its programs and the name score (1 when exact).
CREATE TABLE payout_screening_matches (
  space_id uuid NOT NULL,
  payout_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('name', 'address')),
  sdn_uid text NOT NULL,
  listed text NOT NULL,
  programs text NOT NULL,
  score numeric(4, 3) NOT NULL CHECK (score > 0 AND score <= 1),
  matched text NOT NULL,
  held_at timestamptz NOT NULL,
  PRIMARY KEY (space_id, payout_id),
  FOREIGN KEY (space_id, payout_id) REFERENCES payouts (space_id, id) ON DELETE CASCADE
);
