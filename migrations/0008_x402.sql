-- x402 settlements: one row per EIP-3009 authorization Tollbook was asked to put on chain.
-- The row is claimed before anything is broadcast, so one authorization is sent at most once
-- and one payment request takes at most one machine settlement at a time.

CREATE TABLE x402_settlements (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  -- The request paid on its page, or the request minted for a facilitator call once settled.
  payment_request_id uuid REFERENCES payment_requests (id),
  via text NOT NULL CHECK (via IN ('page', 'facilitator')),
  network text NOT NULL,
  asset text NOT NULL,
  payer text NOT NULL,
  pay_to text NOT NULL,
  nonce text NOT NULL,
  amount_base numeric NOT NULL CHECK (amount_base > 0),
  resource_url text,
  -- SHA-256 of the signature: a retry carries the same one, another authorization does not.
  signature_hash text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'settled', 'failed')),
  tx_hash text,
  error_reason text,
  lease_until timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  settled_at timestamptz
);
-- An authorization (token, payer, nonce) is live in at most one row; a failed attempt frees it.
CREATE UNIQUE INDEX x402_settlements_authorization_idx
  ON x402_settlements (network, asset, payer, nonce) WHERE status <> 'failed';
-- A request is being paid, or was paid, by at most one authorization.
CREATE UNIQUE INDEX x402_settlements_request_idx
  ON x402_settlements (payment_request_id) WHERE status <> 'failed' AND via = 'page';
CREATE INDEX x402_settlements_space_idx ON x402_settlements (space_id, created_at);

-- Transactions broadcast whose receipt did not arrive in time, keyed by the signature's hash:
-- the x402 scheme's pending-settlement store, shared by every server process.
CREATE TABLE x402_pending_transactions (
  signature_hash text PRIMARY KEY,
  tx_hash text NOT NULL,
  created_at timestamptz NOT NULL
);

-- The facilitator finds the space that proved a pay-to address.
CREATE INDEX accounts_address_proven_idx ON accounts (address_proven) WHERE address_proven IS NOT NULL;
