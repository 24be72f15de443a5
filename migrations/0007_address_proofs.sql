-- A crypto account's pay-to address is quoted to payers only once the space proved it controls
-- it: a one-time challenge, signed by the address (EIP-191 personal_sign).
ALTER TABLE accounts ADD COLUMN address_challenge text;
ALTER TABLE accounts ADD COLUMN address_challenge_expires_at timestamptz;
ALTER TABLE accounts ADD COLUMN address_proven text;
ALTER TABLE accounts ADD COLUMN address_proven_at timestamptz;
