-- The status history of payments out, for the payment's detail screen. Every change of a
-- payment's status goes through the payouts store's one update, which writes the step here in
-- the same statement, whichever code path made it (the app, the chain watch, an agent). Who
-- acted is on the payment (approvals, rejected_by, released_by); this table says what happened
-- and when.

-- One change of one payment's status: from what, to what, why (a blocked or failed reason) and when.
CREATE TABLE payout_status_changes (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  space_id uuid NOT NULL,
  payout_id uuid NOT NULL,
  from_status text NOT NULL,
  to_status text NOT NULL CHECK (to_status IN (
    'awaiting_approval', 'approved', 'executing', 'executed', 'blocked', 'rejected', 'failed', 'cancelled'
  )),
  reason text,
  changed_at timestamptz NOT NULL,
  CHECK (from_status <> to_status),
  FOREIGN KEY (space_id, payout_id) REFERENCES payouts (space_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE payout_status_changes IS
  'One change of a payment''s status (from, to, reason, when), written with the change itself.';
CREATE INDEX payout_status_changes_payout_idx ON payout_status_changes (space_id, payout_id, id);
