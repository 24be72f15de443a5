-- A seller profile is who a book's business is on its documents and public pages: names, the
-- structured address, tax identifiers, how to reach it, its payment terms and invoice footer.
-- One row per book, written from Book settings; a book without a row has an empty profile.
CREATE TABLE seller_profiles (
  space_id uuid PRIMARY KEY REFERENCES spaces (id),
  legal_name text NOT NULL DEFAULT '' CHECK (length(legal_name) <= 200),
  trading_name text NOT NULL DEFAULT '' CHECK (length(trading_name) <= 200),
  address_line1 text NOT NULL DEFAULT '' CHECK (length(address_line1) <= 200),
  address_line2 text NOT NULL DEFAULT '' CHECK (length(address_line2) <= 200),
  postal_code text NOT NULL DEFAULT '' CHECK (length(postal_code) <= 20),
  city text NOT NULL DEFAULT '' CHECK (length(city) <= 100),
  region text NOT NULL DEFAULT '' CHECK (length(region) <= 100),
  -- ISO 3166-1 alpha-2, or empty while unknown.
  country text NOT NULL DEFAULT '' CHECK (country = '' OR country ~ '^[A-Z]{2}$'),
  vat_id text NOT NULL DEFAULT '' CHECK (length(vat_id) <= 64),
  tax_number text NOT NULL DEFAULT '' CHECK (length(tax_number) <= 64),
  registration_id text NOT NULL DEFAULT '' CHECK (length(registration_id) <= 64),
  email text NOT NULL DEFAULT '' CHECK (length(email) <= 200),
  phone text NOT NULL DEFAULT '' CHECK (length(phone) <= 40),
  website text NOT NULL DEFAULT '' CHECK (length(website) <= 200),
  payment_terms_days integer NOT NULL DEFAULT 14 CHECK (payment_terms_days BETWEEN 0 AND 365),
  invoice_footer text NOT NULL DEFAULT '' CHECK (length(invoice_footer) <= 1000),
  updated_at timestamptz NOT NULL
);

-- The public handle names a book on its public pages: unique, and a slug (lower-case letters
-- and digits in hyphen-separated runs).
ALTER TABLE spaces ADD CONSTRAINT spaces_public_handle_key UNIQUE (public_handle);
ALTER TABLE spaces ADD CONSTRAINT spaces_public_handle_check
  CHECK (public_handle ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(public_handle) BETWEEN 3 AND 48);

-- The seller as it stood when the document was sent (the profile merged under what the
-- integration set); null until then. A sent document keeps it whatever the profile becomes.
ALTER TABLE invoices ADD COLUMN seller_snapshot jsonb;
