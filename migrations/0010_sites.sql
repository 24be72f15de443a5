-- Sites a space proved it controls: its payment pages may be framed there, and nowhere else.
CREATE TABLE sites (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  origin text NOT NULL,
  token text NOT NULL,
  verified_at timestamptz,
  created_at timestamptz NOT NULL,
  UNIQUE (space_id, origin)
);
