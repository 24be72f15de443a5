-- An invitation to join a space with a role: sent by mail to an address, answered once through
-- its link (the token is stored as its SHA-256), within 7 days, unless an owner or admin revokes
-- it first. A pending invitation is one neither accepted, revoked nor expired.
CREATE TABLE space_invitations (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id),
  email text NOT NULL CHECK (length(email) BETWEEN 3 AND 200),
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
  token_hash text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  invited_by uuid NOT NULL REFERENCES users (id),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL CHECK (expires_at > created_at),
  accepted_at timestamptz CHECK (accepted_at >= created_at),
  accepted_by uuid REFERENCES users (id),
  revoked_at timestamptz CHECK (revoked_at >= created_at),
  CHECK ((accepted_at IS NULL) = (accepted_by IS NULL)),
  CHECK (accepted_at IS NULL OR revoked_at IS NULL),
  UNIQUE (space_id, id)
);
