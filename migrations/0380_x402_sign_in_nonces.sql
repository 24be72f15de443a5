-- A sign-in-with-x nonce a book has accepted: one row per (book, nonce), written when a signed-in
-- payer's call is charged to its credit, so the same signed message is never accepted twice. The
-- row may go once expires_at is past, because the extension's validator refuses such a message
-- anyway (its expiration time, or five minutes after it was issued, whichever is sooner).
CREATE TABLE x402_sign_in_nonces (
  space_id uuid NOT NULL REFERENCES spaces (id),
  nonce text NOT NULL CHECK (char_length(nonce) BETWEEN 8 AND 200),
  -- The payer's credit the call was charged to: evm:0x… in lowercase.
  client_ref text NOT NULL CHECK (client_ref ~ '^evm:0x[0-9a-f]{40}$'),
  accepted_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (space_id, nonce)
);
CREATE INDEX x402_sign_in_nonces_expiry_idx ON x402_sign_in_nonces (expires_at);
