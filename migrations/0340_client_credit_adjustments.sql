-- A change an owner or admin made by hand to a client's prepaid credit, with its reason: a grant
-- (amount above zero), a correction (either sign) or a refund (below zero, paid back to the
-- client). Each is booked as one ledger entry, written in that entry's own statement.
CREATE TABLE client_credit_adjustments (
  id uuid NOT NULL,
  space_id uuid NOT NULL REFERENCES spaces (id),
  client_credit_id uuid NOT NULL,
  amount numeric NOT NULL CHECK (amount <> 0),
  refund boolean NOT NULL DEFAULT false,
  reason text NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
  user_id uuid NOT NULL REFERENCES users (id),
  entry_id uuid NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (space_id, id),
  CHECK (NOT refund OR amount < 0),
  FOREIGN KEY (space_id, client_credit_id) REFERENCES client_credits (space_id, id),
  FOREIGN KEY (space_id, entry_id) REFERENCES ledger_entries (space_id, id)
);
CREATE INDEX client_credit_adjustments_credit_idx ON client_credit_adjustments (space_id, client_credit_id, created_at DESC);
