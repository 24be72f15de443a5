-- A bank account's requisites: how a payer reaches it (sepa {iban, bic, holder}; swift; uk;
-- us_ach), checked by the contacts' rules before they are written. Only bank accounts have them.
ALTER TABLE accounts ADD COLUMN requisites jsonb;
ALTER TABLE accounts ADD CONSTRAINT accounts_requisites_check CHECK (
  requisites IS NULL
  OR (kind = 'bank' AND requisites ->> 'scheme' IN ('sepa', 'swift', 'uk', 'us_ach')
      AND coalesce(requisites ->> 'holder', '') <> '')
);
