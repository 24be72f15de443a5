-- A book's receipt key (the x402 offer-receipt extension): a secp256k1 key whose EIP-712
-- signature on a receipt says this book took the payment. Its address is published at
-- /.well-known/x402-receipt-signers/{address}; the key itself is sealed with the master key.
CREATE TABLE x402_receipt_keys (
  space_id uuid PRIMARY KEY REFERENCES spaces (id),
  address text NOT NULL UNIQUE CHECK (address ~ '^0x[0-9a-f]{40}$'),
  key_sealed text NOT NULL,
  created_at timestamptz NOT NULL
);

-- The signed receipt of a settled x402 payment, kept with its settlement claim and found from
-- the payment's ledger row by its settlement reference (<caip2>:<transaction>). One per claim.
-- A receipt lives beside its settlement in the same book: (space_id, id) names the settlement.
ALTER TABLE x402_settlements ADD CONSTRAINT x402_settlements_space_id_id_key UNIQUE (space_id, id);

CREATE TABLE x402_receipts (
  claim_id uuid NOT NULL,
  space_id uuid NOT NULL REFERENCES x402_receipt_keys (space_id),
  reference text NOT NULL CHECK (length(reference) BETWEEN 1 AND 200),
  receipt jsonb NOT NULL CHECK (receipt ->> 'format' = 'eip712'),
  issued_at timestamptz NOT NULL,
  PRIMARY KEY (space_id, claim_id),
  FOREIGN KEY (space_id, claim_id) REFERENCES x402_settlements (space_id, id)
);
CREATE INDEX x402_receipts_reference_idx ON x402_receipts (space_id, reference);
