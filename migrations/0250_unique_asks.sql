-- A request minted on an account paid by direct transfers (crypto, a token of known decimals)
-- asks for an amount no other open request of that account asks for, so the watch tells the
-- transfers apart. The mint chooses the amount; this index declares the rule, so two mints can
-- never both hold one amount, whatever the code does. Requests minted before the rule was
-- declared (and requests on other accounts, which may share an amount) leave unique_ask false.
ALTER TABLE payment_requests ADD COLUMN unique_ask boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX payment_requests_unique_ask_idx ON payment_requests (account_id, amount_due)
  WHERE status = 'active' AND unique_ask;
