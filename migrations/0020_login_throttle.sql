-- Throttled attempts (login, signup, password-reset requests): one row per scope and subject
-- (an account's email, lower case, or a client address), counting attempts since the last quiet
-- period. When the count passes the scope's free allowance, locked_until is pushed out by an
-- exponential back-off with a cap (the schedule lives in platform/http/attempt-throttle.ts).
CREATE TABLE attempt_throttles (
  scope text NOT NULL CHECK (scope IN ('login-account', 'login-address', 'signup-address', 'reset-account', 'reset-address')),
  subject text NOT NULL CHECK (length(subject) BETWEEN 1 AND 320),
  attempts integer NOT NULL CHECK (attempts >= 0),
  locked_until timestamptz,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (scope, subject)
);
CREATE INDEX attempt_throttles_updated_idx ON attempt_throttles (updated_at);

-- A password reset sent by mail: the link's token is stored only as its SHA-256 hash, works
-- once (used_at) and until expires_at (30 minutes after it was asked for).
CREATE TABLE password_resets (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL CHECK (expires_at > created_at),
  used_at timestamptz CHECK (used_at IS NULL OR used_at >= created_at)
);
CREATE INDEX password_resets_user_idx ON password_resets (user_id) WHERE used_at IS NULL;
