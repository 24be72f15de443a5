-- Issue 22: every open request on a crypto address asks for an amount no other open request on
-- that account shares, so a direct transfer finds its own request.

-- What the payer is asked to send: the amount, lowered by a tag in the token's last decimals
-- (under one cent) when another open request of the account already asks for the plain amount.
-- A request counts as paid in full once it has received amount_due. Older rows ask for amount.
ALTER TABLE payment_requests ADD COLUMN amount_due numeric;
UPDATE payment_requests SET amount_due = amount;
ALTER TABLE payment_requests ALTER COLUMN amount_due SET NOT NULL;
ALTER TABLE payment_requests ADD CONSTRAINT payment_requests_amount_due_check
  CHECK (amount_due > 0 AND amount_due <= amount AND amount - amount_due < 0.01);
-- The watch and the mint read an account's open requests by their asked amount.
CREATE INDEX payment_requests_open_due_idx ON payment_requests (account_id, amount_due) WHERE status = 'active';

-- Which rule matched a chain transfer to this settlement: 'exact' (the transfer was exactly what
-- the request still asked for) or 'oldest_first' (what was left over: partial or over-payments).
-- NULL for rails that name their request (x402, card, bank, manual).
ALTER TABLE settlements ADD COLUMN matched_by text CHECK (matched_by IN ('exact', 'oldest_first'));
