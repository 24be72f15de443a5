-- An accepted quote becomes an invoice: the quote names the invoice made from it.
ALTER TABLE invoices ADD COLUMN invoice_id uuid REFERENCES invoices (id);

-- Automatic reminders: each stage (before due, on due, after due) goes out once per invoice,
-- whichever process gets there first.
ALTER TABLE invoice_deliveries ADD COLUMN auto_stage text CHECK (auto_stage IN ('before_due', 'on_due', 'after_due'));
CREATE UNIQUE INDEX invoice_deliveries_auto_idx ON invoice_deliveries (invoice_id, auto_stage) WHERE auto_stage IS NOT NULL;
CREATE INDEX invoices_auto_remind_idx ON invoices (due_on) WHERE auto_remind AND kind = 'invoice' AND status IN ('sent', 'partial');

-- In development without SMTP_URL, mail is written as .eml files; the app lists where.
ALTER TABLE invoice_deliveries ADD COLUMN mail_file text;
