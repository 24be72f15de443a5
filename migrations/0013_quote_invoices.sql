-- An accepted quote becomes an invoice: the quote names the invoice made from it.
ALTER TABLE invoices ADD COLUMN invoice_id uuid REFERENCES invoices (id);
