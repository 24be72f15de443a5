-- A payment request minted from an invoice's public page pays that invoice when it settles.
ALTER TABLE payment_requests ADD COLUMN invoice_id uuid REFERENCES invoices (id);
CREATE INDEX payment_requests_invoice_idx ON payment_requests (invoice_id) WHERE invoice_id IS NOT NULL;
-- Money that paid an invoice and was later taken back by a chain reorganisation: the invoice
-- stays as it was (paid stays paid) and the gap is recorded here.
ALTER TABLE invoices ADD COLUMN shortfall_amount numeric NOT NULL DEFAULT 0;
