-- The payer's idempotency key (the x402 `payment-identifier` extension) on a settlement claim. A
-- payment carrying an id is settled at most once per (pay-to address, id): a live claim holds the
-- pair across every process and restart; a failed claim frees it for the payer's next attempt.
ALTER TABLE x402_settlements
  ADD COLUMN payment_id text CHECK (payment_id ~ '^[A-Za-z0-9_-]{16,128}$');
CREATE UNIQUE INDEX x402_settlements_payment_id_idx ON x402_settlements (pay_to, payment_id)
  WHERE payment_id IS NOT NULL AND status <> 'failed';
