-- A document kind's numbering in a book: its prefix and the last number it gave. Invoices, quotes
-- and credit notes count apart (INV-, QUO-, CN- by default). A number is taken in the
-- transaction that makes the document, under this row's lock, so a rolled back creation gives
-- its number back and the numbers given stay without gaps.
CREATE TABLE document_numbering (
  space_id uuid NOT NULL REFERENCES spaces (id),
  kind text NOT NULL CHECK (kind IN ('invoice', 'quote', 'credit_note')),
  prefix text NOT NULL CHECK (length(prefix) <= 20 AND prefix ~ '^[A-Za-z0-9/._-]*$'),
  last_value integer NOT NULL CHECK (last_value >= 0),
  PRIMARY KEY (space_id, kind)
);

-- Invoices keep counting where the shared counter stood.
INSERT INTO document_numbering (space_id, kind, prefix, last_value)
  SELECT space_id, 'invoice', 'INV-', last_value FROM invoice_number_counters;

DROP TABLE invoice_number_counters;
