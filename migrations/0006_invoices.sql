-- Invoice mirroring (spec §2.3, §3, §4): invoices mirrored from a seller's own system, the
-- payments recorded against them, their deliveries and reminders, and a per-space counter for
-- generated numbers. Amounts are NUMERIC; line items and the tax breakdown are kept as computed
-- at write time (jsonb), so a reader never recomputes money.

CREATE TABLE invoices (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  -- The key that mirrored the invoice: its webhook address hears invoice.paid.
  key_id uuid REFERENCES integration_keys (id) ON DELETE SET NULL,
  account_id uuid NOT NULL REFERENCES accounts (id),
  contact_id uuid REFERENCES contacts (id) ON DELETE SET NULL,
  project_id uuid,
  corrects_invoice_id uuid REFERENCES invoices (id),
  kind text NOT NULL CHECK (kind IN ('invoice', 'credit_note', 'quote')),
  status text NOT NULL CHECK (status IN ('draft', 'sent', 'partial', 'paid', 'issued', 'void',
    'quote_draft', 'quote_sent', 'quote_accepted', 'quote_declined', 'quote_expired')),
  number text NOT NULL,
  token text NOT NULL UNIQUE,
  currency text NOT NULL,
  issued_on date NOT NULL,
  due_on date NOT NULL,
  client_name text NOT NULL,
  client_email text NOT NULL DEFAULT '',
  client_address text NOT NULL DEFAULT '',
  client_country text NOT NULL DEFAULT '',
  client_country_code text NOT NULL DEFAULT '',
  client_phone text NOT NULL DEFAULT '',
  client_reg_number text NOT NULL DEFAULT '',
  client_tax_id text NOT NULL DEFAULT '',
  seller_name text NOT NULL DEFAULT '',
  seller_email text NOT NULL DEFAULT '',
  seller_phone text NOT NULL DEFAULT '',
  seller_address text NOT NULL DEFAULT '',
  seller_country text NOT NULL DEFAULT '',
  seller_reg_number text NOT NULL DEFAULT '',
  seller_tax_id text NOT NULL DEFAULT '',
  seller_website text NOT NULL DEFAULT '',
  notes text NOT NULL DEFAULT '',
  purchase_order text NOT NULL DEFAULT '',
  tax_authority_number text NOT NULL DEFAULT '',
  tax_exempt_reason text,
  tax_zero_reason text,
  prices_include_tax boolean NOT NULL DEFAULT false,
  line_items jsonb NOT NULL,
  tax_breakdown jsonb NOT NULL,
  subtotal numeric NOT NULL,
  tax_total numeric NOT NULL,
  total numeric NOT NULL CHECK (total >= 0),
  paid_amount numeric NOT NULL DEFAULT 0,
  credited_amount numeric NOT NULL DEFAULT 0,
  auto_remind boolean NOT NULL DEFAULT true,
  last_paid_on date,
  sent_at timestamptz,
  -- Set once, in the transaction that closes the invoice: invoice.paid is written only then.
  paid_event_at timestamptz,
  voided_at timestamptz,
  void_reason text NOT NULL DEFAULT '',
  reminders_paused_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK (paid_amount >= 0 AND paid_amount <= total)
);
-- A seller's document number names one live invoice per space; a voided one frees its number.
CREATE UNIQUE INDEX invoices_live_number ON invoices (space_id, number) WHERE status <> 'void';
CREATE INDEX invoices_space_idx ON invoices (space_id, created_at);

-- The last generated INV-nnnnnn per space (generated numbers skip ones a seller already used).
CREATE TABLE invoice_number_counters (
  space_id uuid PRIMARY KEY REFERENCES spaces (id) ON DELETE CASCADE,
  last_value integer NOT NULL
);

CREATE TABLE invoice_payments (
  id uuid PRIMARY KEY,
  -- Orders payments recorded within one clock tick.
  seq bigint GENERATED ALWAYS AS IDENTITY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  invoice_id uuid NOT NULL REFERENCES invoices (id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts (id),
  amount numeric NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  via text NOT NULL CHECK (via IN ('manual', 'settlement', 'card', 'write_off')),
  note text NOT NULL DEFAULT '',
  occurred_on date NOT NULL,
  tx_id uuid,
  entry_id uuid REFERENCES ledger_entries (id),
  created_at timestamptz NOT NULL
);
CREATE INDEX invoice_payments_invoice_idx ON invoice_payments (invoice_id, seq);

CREATE TABLE invoice_deliveries (
  id uuid PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  invoice_id uuid NOT NULL REFERENCES invoices (id) ON DELETE CASCADE,
  purpose text NOT NULL CHECK (purpose IN ('send', 'remind')),
  via text[] NOT NULL,
  recipient text NOT NULL DEFAULT '',
  cc text[] NOT NULL DEFAULT '{}',
  message text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL
);
CREATE INDEX invoice_deliveries_invoice_idx ON invoice_deliveries (invoice_id, purpose, seq);
