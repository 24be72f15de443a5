-- What a book is owed on its invoices, pre-summed by the day they fall due: per currency and due
-- day, how many invoices can still take a payment (sent or partial) and the sum of their open
-- amounts. The invoices store keeps a row in step with every write of an invoice, in the same
-- transaction (features/invoices/store.ts), so Home's overdue figure sums due days, not invoices.
-- A day whose invoices are all paid or void keeps its row at zero.
CREATE TABLE invoice_owed_days (
  space_id uuid NOT NULL REFERENCES spaces (id),
  currency text NOT NULL,
  due_on date NOT NULL,
  invoices integer NOT NULL CHECK (invoices >= 0),
  owed numeric NOT NULL CHECK (owed >= 0),
  PRIMARY KEY (space_id, currency, due_on),
  CHECK (invoices > 0 OR owed = 0)
);

INSERT INTO invoice_owed_days (space_id, currency, due_on, invoices, owed)
SELECT space_id, currency, due_on, COUNT(*), SUM(GREATEST(total - credited_amount - paid_amount, 0))
FROM invoices
WHERE kind = 'invoice' AND status IN ('sent', 'partial')
GROUP BY space_id, currency, due_on;

-- Home read the owed invoices themselves by this index; it reads the days now, and nothing else
-- asks for owed invoices by due date.
DROP INDEX invoices_owed_due_idx;
