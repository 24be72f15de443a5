-- A transaction a gas wallet lane signed for an x402 settlement: the first one and each
-- replacement at the same nonce (higher fees), so whoever follows the settlement recognises
-- whichever of them mined. `first_hash` is the first one's hash: what the scheme, the claim and
-- the pending-settlement store know the settlement by. A row is written before its broadcast.
-- Global: a gas wallet's transaction belongs to no book. Nothing here makes (lane, nonce) or
-- (lane, nonce, fees) unique: the node itself refuses a second transaction at a nonce unless it
-- raises the fees, and a development chain started afresh (every test file starts its own anvil
-- beside one database) numbers its nonces from 0 again.
CREATE TABLE x402_broadcasts (
  tx_hash text PRIMARY KEY CHECK (tx_hash ~ '^0x[0-9a-f]{64}$'),
  first_hash text NOT NULL REFERENCES x402_broadcasts (tx_hash),
  network text NOT NULL,
  lane text NOT NULL CHECK (lane ~ '^0x[0-9a-f]{40}$'),
  nonce bigint NOT NULL CHECK (nonce >= 0),
  to_address text NOT NULL,
  data text NOT NULL,
  gas numeric NOT NULL CHECK (gas > 0),
  max_fee_per_gas numeric NOT NULL CHECK (max_fee_per_gas >= max_priority_fee_per_gas),
  max_priority_fee_per_gas numeric NOT NULL CHECK (max_priority_fee_per_gas >= 0),
  created_at timestamptz NOT NULL
);
CREATE INDEX x402_broadcasts_first_idx ON x402_broadcasts (first_hash, created_at);

-- The last balance read of each gas wallet lane per network (the periodic balance check writes
-- it): pages warn from it without asking the chain. `low_since` is when it fell below the
-- threshold (null while above), so owners are told once per fall.
CREATE TABLE gas_wallet_balances (
  network text NOT NULL,
  address text NOT NULL CHECK (address ~ '^0x[0-9a-f]{40}$'),
  wei numeric NOT NULL CHECK (wei >= 0),
  low_since timestamptz,
  read_at timestamptz NOT NULL,
  PRIMARY KEY (network, address)
);
