-- The client's answer to a quote: when it was given and the name the person typed on the quote's
-- page (empty when the seller recorded the answer in the app). An accepted or declined quote
-- always says when; quotes decided before this column existed take their last change.
ALTER TABLE invoices ADD COLUMN quote_decided_at timestamptz;
ALTER TABLE invoices ADD COLUMN quote_decided_by text NOT NULL DEFAULT ''
  CHECK (length(quote_decided_by) <= 200);
UPDATE invoices SET quote_decided_at = updated_at WHERE status IN ('quote_accepted', 'quote_declined');
ALTER TABLE invoices ADD CONSTRAINT invoices_quote_decided_check
  CHECK (status NOT IN ('quote_accepted', 'quote_declined') OR quote_decided_at IS NOT NULL);
